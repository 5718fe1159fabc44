//! One direction of the link as arithmetic: when a packet that arrives now leaves the other end,
//! or why it never does. No I/O and no clock here (times are nanoseconds given by the caller), so
//! the forwarder's timing is tested exactly.

use crate::spec::{LaneSpec, QueueLimit};
use std::collections::VecDeque;

/// What becomes of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It leaves the other end at this time (ns).
    Departs(u64),
    /// The seeded draw lost it.
    Lost,
    /// The queue in front of the bandwidth limit was full (tail drop).
    QueueFull,
}

/// Counts of one direction, since the link was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LaneCounts {
    pub packets: u64,
    pub bytes: u64,
    pub lost: u64,
    pub queue_drops: u64,
    /// The most packets that waited for the bandwidth limit at once.
    pub max_queue: u64,
}

pub struct Lane {
    spec: LaneSpec,
    rng: callbench_primitives::rng::Rng,
    /// When the transmitter finishes the last packet given to it.
    free_at: u64,
    /// When the last packet leaves the other end: none may leave before it (no reordering).
    last_departure: u64,
    /// Packets given to the transmitter and not yet fully sent: (end of transmission, size).
    sending: VecDeque<(u64, u32)>,
    sending_bytes: u64,
    pub counts: LaneCounts,
}

impl Lane {
    pub fn new(spec: LaneSpec, seed: u64) -> Lane {
        Lane {
            spec,
            rng: callbench_primitives::rng::Rng::new(seed),
            free_at: 0,
            last_departure: 0,
            sending: VecDeque::new(),
            sending_bytes: 0,
            counts: LaneCounts::default(),
        }
    }

    /// New settings from now on; packets already scheduled keep their times.
    pub fn set_spec(&mut self, spec: LaneSpec) {
        self.spec = spec;
    }

    /// The fate of a packet of `size` bytes (IP header included) arriving at `now`.
    pub fn admit(&mut self, now: u64, size: usize) -> Fate {
        self.counts.packets += 1;
        self.counts.bytes += size as u64;
        while let Some(&(end, bytes)) = self.sending.front() {
            if end > now {
                break;
            }
            self.sending.pop_front();
            self.sending_bytes -= bytes as u64;
        }
        if self.spec.loss > 0.0 && self.rng.next_f64() < self.spec.loss {
            self.counts.lost += 1;
            return Fate::Lost;
        }
        let delay = self.delay();
        let arrival = match self.spec.bandwidth {
            None => now + delay,
            Some(bits_per_s) => {
                let full = match self.spec.queue {
                    QueueLimit::Packets(p) => self.sending.len() as u64 >= p as u64,
                    QueueLimit::Bytes(b) => self.sending_bytes + size as u64 > b,
                };
                if full {
                    self.counts.queue_drops += 1;
                    return Fate::QueueFull;
                }
                let start = now.max(self.free_at);
                let end = start + transmission_ns(size, bits_per_s);
                self.free_at = end;
                self.sending.push_back((end, size as u32));
                self.sending_bytes += size as u64;
                self.counts.max_queue = self.counts.max_queue.max(self.sending.len() as u64);
                end + delay
            }
        };
        let departure = arrival.max(self.last_departure);
        self.last_departure = departure;
        Fate::Departs(departure)
    }

    /// This packet's one-way delay: the lane's, plus or minus up to the jitter (uniform).
    fn delay(&mut self) -> u64 {
        let base = self.spec.delay.as_nanos() as i128;
        let jitter = self.spec.jitter.as_nanos() as i128;
        if jitter == 0 {
            return base as u64;
        }
        let offset = ((self.rng.next_f64() * 2.0 - 1.0) * jitter as f64) as i128;
        (base + offset).max(0) as u64
    }
}

/// Time to put `size` bytes on a wire of `bits_per_s`, rounded up to the nanosecond.
pub fn transmission_ns(size: usize, bits_per_s: u64) -> u64 {
    let bits = size as u128 * 8 * 1_000_000_000;
    bits.div_ceil(bits_per_s as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn lane(spec: &str) -> Lane {
        Lane::new(crate::LinkSpec::parse(spec).unwrap().up, 7)
    }

    #[test]
    fn every_packet_pays_the_one_way_delay() {
        let mut l = lane("rtt=40ms");
        assert_eq!(l.admit(0, 1500), Fate::Departs(20 * MS));
        assert_eq!(l.admit(5 * MS, 60), Fate::Departs(25 * MS));
    }

    #[test]
    fn bandwidth_serialises_packets_one_after_another() {
        // 1500 bytes at 12 Mbit/s take exactly 1 ms on the wire.
        let mut l = lane("rtt=0,bandwidth=12mbit");
        assert_eq!(transmission_ns(1500, 12_000_000), MS);
        let fates: Vec<Fate> = (0..3).map(|_| l.admit(0, 1500)).collect();
        assert_eq!(fates, vec![Fate::Departs(MS), Fate::Departs(2 * MS), Fate::Departs(3 * MS)]);
        // An idle wire starts at once again.
        assert_eq!(l.admit(10 * MS, 1500), Fate::Departs(11 * MS));
        assert_eq!(l.counts.max_queue, 3);
    }

    #[test]
    fn a_full_queue_drops_the_newcomer() {
        let mut l = lane("bandwidth=12mbit,queue=2");
        assert!(matches!(l.admit(0, 1500), Fate::Departs(_)));
        assert!(matches!(l.admit(0, 1500), Fate::Departs(_)));
        assert_eq!(l.admit(0, 1500), Fate::QueueFull);
        // Once the first has been sent there is room again.
        assert_eq!(l.admit(MS, 1500), Fate::Departs(3 * MS));
        assert_eq!(l.counts.queue_drops, 1);
        let mut bytes = lane("bandwidth=12mbit,queue=3000B");
        assert!(matches!(bytes.admit(0, 1500), Fate::Departs(_)));
        assert!(matches!(bytes.admit(0, 1500), Fate::Departs(_)));
        assert_eq!(bytes.admit(0, 100), Fate::QueueFull);
    }

    #[test]
    fn jitter_varies_delay_but_never_reorders() {
        // Packets 20 ms apart, more than the jitter's span: each delay is its own draw.
        let mut l = lane("rtt=20ms,jitter=5ms");
        let delays: Vec<u64> = (0..500u64)
            .map(|i| match l.admit(i * 20 * MS, 100) {
                Fate::Departs(at) => at - i * 20 * MS,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(delays.iter().all(|d| (5 * MS..=15 * MS).contains(d)), "{delays:?}");
        let (min, max) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
        assert!(*max - *min > 9 * MS, "jitter seen: {min}..{max}");
        // A packet every 0.1 ms, closer than the jitter: none leaves before the one ahead of it.
        let mut l = lane("rtt=20ms,jitter=5ms");
        let mut last = 0;
        for i in 0..2000u64 {
            let now = i * 100_000;
            let Fate::Departs(at) = l.admit(now, 100) else { panic!() };
            assert!(at >= last, "reordered at {i}");
            assert!(at >= now + 5 * MS && at <= now + 15 * MS, "{i}: {}", at - now);
            last = at;
        }
    }

    #[test]
    fn loss_follows_the_seed_and_the_rate() {
        let run = |seed| {
            let mut l = Lane::new(crate::LinkSpec::parse("loss=0.1").unwrap().up, seed);
            (0..10_000).map(|i| l.admit(i, 100) == Fate::Lost).collect::<Vec<bool>>()
        };
        let (a, b, c) = (run(1), run(1), run(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let lost = a.iter().filter(|l| **l).count();
        assert!((900..1100).contains(&lost), "{lost} of 10000 lost at 10%");
    }

    #[test]
    fn new_settings_apply_to_later_packets() {
        let mut l = lane("rtt=2ms");
        assert_eq!(l.admit(0, 100), Fate::Departs(MS));
        l.set_spec(crate::LinkSpec::parse("rtt=20ms").unwrap().up);
        assert_eq!(l.admit(0, 100), Fate::Departs(10 * MS));
    }
}
