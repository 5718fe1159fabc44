//! The one seeded generator (SplitMix64): small, fast, and the same sequence for the same seed on
//! every machine, so that open-loop arrivals and a link's losses can be replayed.

#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponential with mean 1.
    pub fn next_exp(&mut self) -> f64 {
        -(1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert!((0..100).all(|_| a.next_u64() == b.next_u64()));
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
        // Seed 0 is a seed like any other (SplitMix64 has no forbidden state).
        assert_ne!(Rng::new(0).next_u64(), Rng::new(0).next_u64().wrapping_add(1));
    }

    #[test]
    fn uniform_and_exponential_means() {
        let mut rng = Rng::new(1);
        let n = 100_000;
        let u: f64 = (0..n).map(|_| rng.next_f64()).sum::<f64>() / n as f64;
        let e: f64 = (0..n).map(|_| rng.next_exp()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.01, "{u}");
        assert!((e - 1.0).abs() < 0.02, "{e}");
    }
}
