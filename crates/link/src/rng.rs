//! The link's seeded generator (xorshift64*): the same seed loses the same packets.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // An odd multiplier maps distinct seeds to distinct states; xorshift must not start at 0.
        let state = seed.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Rng(if state == 0 { 1 } else { state })
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}
