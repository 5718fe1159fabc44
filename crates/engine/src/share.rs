//! One machine's share of a run split across several (k6's execution segments): the part (a, b]
//! of [0, 1]. Counts split as ⌊N·b⌋ − ⌊N·a⌋, so the shares of a partition of [0, 1] add up to N
//! exactly; an open-loop schedule is split call by call, so the workers' schedules together are
//! exactly the one-machine schedule (see [`Shared`]).

use crate::pacer::{Next, Pacer};
use crate::EngineError;
use callbench_primitives::rng::Rng;
use std::time::Duration;

/// An exact fraction num/den, 0 ≤ num ≤ den.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fraction {
    pub num: u64,
    pub den: u64,
}

impl Fraction {
    /// `2/3`, `0.25` or `1` (decimals up to 9 places).
    pub fn parse(text: &str) -> Result<Self, EngineError> {
        Self::parse_text(text).map_err(EngineError::Settings)
    }

    fn parse_text(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = || format!("{t:?} is not a fraction between 0 and 1 (write 1/3, 0.25, 0 or 1)");
        let (num, den) = match t.split_once('/') {
            Some((n, d)) => (n.trim().parse::<u64>().map_err(|_| bad())?, d.trim().parse::<u64>().map_err(|_| bad())?),
            None => {
                let (whole, decimals) = t.split_once('.').unwrap_or((t, ""));
                if (whole.is_empty() && decimals.is_empty())
                    || decimals.len() > 9
                    || !decimals.chars().all(|c| c.is_ascii_digit())
                {
                    return Err(bad());
                }
                let den = 10u64.pow(decimals.len() as u32);
                let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
                let part: u64 = if decimals.is_empty() { 0 } else { decimals.parse().map_err(|_| bad())? };
                (whole.checked_mul(den).and_then(|w| w.checked_add(part)).ok_or_else(bad)?, den)
            }
        };
        if den == 0 || num > den {
            return Err(bad());
        }
        let g = gcd(num, den);
        Ok(Fraction { num: num / g, den: den / g })
    }

    /// ⌊n · self⌋, exactly.
    pub fn of(&self, n: u64) -> u64 {
        (n as u128 * self.num as u128 / self.den as u128) as u64
    }

    pub fn value(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl std::fmt::Display for Fraction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.num, self.den) {
            (0, _) => write!(f, "0"),
            (n, d) if n == d => write!(f, "1"),
            (n, d) => write!(f, "{n}/{d}"),
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

/// The share (from, to] of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutionSegment {
    pub from: Fraction,
    pub to: Fraction,
    /// Evenly spaced calls are dealt in rounds of this many: call k goes to the segment whose part
    /// of [0, 1] holds (k mod stripes + ½) / stripes. Every worker of a split must use the same
    /// number, a multiple of every boundary's denominator (the default, the lcm of this segment's
    /// own two, is right for an even split into n: it is n, and worker i gets calls k ≡ i mod n).
    pub stripes: u64,
}

impl ExecutionSegment {
    /// The whole run: one machine.
    pub const WHOLE: ExecutionSegment =
        ExecutionSegment { from: Fraction { num: 0, den: 1 }, to: Fraction { num: 1, den: 1 }, stripes: 1 };

    pub fn new(from: Fraction, to: Fraction, stripes: Option<u64>) -> Result<Self, EngineError> {
        if from.num as u128 * to.den as u128 >= to.num as u128 * from.den as u128 {
            let why = format!("a segment runs from a lower to a higher fraction of the run, not {from}:{to}");
            return Err(EngineError::Settings(why));
        }
        let own = lcm(from.den, to.den);
        let stripes = stripes.unwrap_or(own);
        if stripes == 0 || !stripes.is_multiple_of(from.den) || !stripes.is_multiple_of(to.den) {
            let why = format!("--segment-stripes must be a multiple of {own} (the denominators of {from}:{to})");
            return Err(EngineError::Settings(why));
        }
        Ok(ExecutionSegment { from, to, stripes })
    }

    /// `1/3:2/3` (from:to).
    pub fn parse(text: &str, stripes: Option<u64>) -> Result<Self, EngineError> {
        let (from, to) = text.split_once(':').ok_or_else(|| {
            EngineError::Settings(format!("a segment is FROM:TO, fractions of the run (e.g. 1/2:1), not {text:?}"))
        })?;
        Self::new(Fraction::parse(from)?, Fraction::parse(to)?, stripes)
    }

    pub fn is_whole(&self) -> bool {
        self.from.num == 0 && self.to.num == self.to.den
    }

    /// This segment's part of `n` callers, connections or calls: ⌊n·to⌋ − ⌊n·from⌋.
    pub fn share(&self, n: u64) -> u64 {
        self.to.of(n) - self.from.of(n)
    }

    /// b − a.
    pub fn fraction(&self) -> f64 {
        self.to.value() - self.from.value()
    }

    /// Whether evenly spaced call `k` of the one-machine schedule is this segment's.
    pub fn owns_stripe(&self, k: u64) -> bool {
        let slot = k % self.stripes;
        // slot in [from·stripes, to·stripes): both ends are whole numbers of stripes.
        slot >= self.from.of(self.stripes) && slot < self.to.of(self.stripes)
    }

    /// Whether a call drawn uniformly at `u` in [0, 1) is this segment's.
    fn owns_point(&self, u: f64) -> bool {
        u >= self.from.value() && u < self.to.value()
    }

    pub fn describe(&self) -> String {
        format!("{}:{}", self.from, self.to)
    }
}

/// How the one-machine schedule's calls are dealt among segments.
#[derive(Debug, Clone)]
enum Dealing {
    /// Evenly spaced calls: by stripes (worker i of n gets calls k ≡ i mod n).
    Stripes,
    /// Poisson arrivals: each call to the segment holding an independent uniform draw, from a
    /// generator seeded alike on every worker. A Poisson process thinned at random with
    /// probability p is a Poisson process of rate p·R, so each worker's arrivals stay Poisson.
    Draws(Rng),
}

/// The calls of `inner`'s schedule (the whole run's) that belong to `segment`.
pub struct Shared<P> {
    inner: P,
    segment: ExecutionSegment,
    dealing: Dealing,
    next_call: u64,
}

impl<P: Pacer> Shared<P> {
    /// `poisson_seed`: Some when `inner` draws Poisson arrivals (the dealing seed is derived from it).
    pub fn new(inner: P, segment: ExecutionSegment, poisson_seed: Option<u64>) -> Self {
        let dealing = match poisson_seed {
            Some(seed) => Dealing::Draws(Rng::new(seed ^ 0x5EED_0F5E_63E4_7A11)),
            None => Dealing::Stripes,
        };
        Shared { inner, segment, dealing, next_call: 0 }
    }
}

impl<P: Pacer> Pacer for Shared<P> {
    fn next(&mut self) -> Next {
        loop {
            let next = self.inner.next();
            let Next::At(_) = next else { return next };
            let k = self.next_call;
            self.next_call += 1;
            let mine = match &mut self.dealing {
                Dealing::Stripes => self.segment.owns_stripe(k),
                Dealing::Draws(rng) => self.segment.owns_point(rng.next_f64()),
            };
            if mine {
                return next;
            }
        }
    }
    fn requested_calls(&self, from: Duration, to: Duration) -> Option<f64> {
        self.inner.requested_calls(from, to).map(|calls| calls * self.segment.fraction())
    }
    fn ends(&self) -> bool {
        self.inner.ends()
    }
    fn end(&self) -> Option<Duration> {
        self.inner.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::{Arrivals, Open};
    use crate::rate::{RateShape, Segment};

    fn f(text: &str) -> Fraction {
        Fraction::parse(text).unwrap()
    }

    fn even(n: u64) -> Vec<ExecutionSegment> {
        (0..n)
            .map(|i| ExecutionSegment::new(f(&format!("{i}/{n}")), f(&format!("{}/{n}", i + 1)), None).unwrap())
            .collect()
    }

    fn times(p: &mut impl Pacer) -> Vec<Duration> {
        let mut out = Vec::new();
        while let Next::At(t) = p.next() {
            out.push(t);
            assert!(out.len() < 1_000_000, "the schedule does not end");
        }
        out
    }

    /// The union of the segments' schedules, sorted, is the one-machine schedule, call for call.
    fn union_is_the_whole(shape: RateShape, arrivals: Arrivals, segments: &[ExecutionSegment]) {
        let seed = match arrivals {
            Arrivals::Poisson { seed } => Some(seed),
            Arrivals::Uniform => None,
        };
        let whole = times(&mut Open::new(shape.clone(), arrivals));
        let parts: Vec<Vec<Duration>> =
            segments.iter().map(|s| times(&mut Shared::new(Open::new(shape.clone(), arrivals), *s, seed))).collect();
        let mut union: Vec<Duration> = parts.iter().flatten().copied().collect();
        union.sort();
        assert_eq!(union.len(), whole.len(), "{segments:?}");
        let mut sorted_whole = whole.clone();
        sorted_whole.sort();
        assert_eq!(union, sorted_whole, "{arrivals:?} {segments:?}");
        for (s, part) in segments.iter().zip(&parts) {
            let expected = whole.len() as f64 * s.fraction();
            let slack = match arrivals {
                // Stripes deal exactly: within one round of stripes.
                Arrivals::Uniform => s.stripes as f64,
                // Random dealing: binomial, five standard deviations.
                Arrivals::Poisson { .. } => 5.0 * (expected * (1.0 - s.fraction())).sqrt() + 1.0,
            };
            assert!((part.len() as f64 - expected).abs() <= slack, "{s:?}: {} calls, expected {expected}", part.len());
        }
    }

    #[test]
    fn fractions_parse_exactly_and_refuse_what_is_not_one() {
        assert_eq!(f("2/4"), Fraction { num: 1, den: 2 });
        assert_eq!(f("0.25"), Fraction { num: 1, den: 4 });
        assert_eq!(f("1"), Fraction { num: 1, den: 1 });
        assert_eq!(f("0"), Fraction { num: 0, den: 1 });
        for bad in ["", "3/2", "1/0", "-1", "1.5", "x", "0.1234567891"] {
            assert!(Fraction::parse(bad).is_err(), "{bad}");
        }
        assert!(ExecutionSegment::parse("1/2:1/3", None).is_err());
        assert!(ExecutionSegment::parse("1/2", None).is_err());
        assert!(ExecutionSegment::parse("0:1/2", Some(3)).is_err(), "3 stripes cannot hold halves");
        assert!(ExecutionSegment::parse("0:1", None).unwrap().is_whole());
    }

    #[test]
    fn counts_split_exactly_for_every_partition() {
        for n in [0u64, 1, 7, 50, 1000, 999_983] {
            for parts in [even(1), even(2), even(3), even(7)] {
                assert_eq!(parts.iter().map(|s| s.share(n)).sum::<u64>(), n, "{n} into {}", parts.len());
            }
            let uneven = [("0", "1/3"), ("1/3", "0.5"), ("0.5", "1")]
                .map(|(a, b)| ExecutionSegment::new(f(a), f(b), Some(6)).unwrap());
            assert_eq!(uneven.iter().map(|s| s.share(n)).sum::<u64>(), n);
        }
        assert_eq!(even(3).iter().map(|s| s.share(50)).collect::<Vec<_>>(), vec![16, 17, 17]);
    }

    #[test]
    fn an_even_split_deals_call_k_to_worker_k_mod_n() {
        for n in [2u64, 3, 4, 6] {
            for (i, s) in even(n).iter().enumerate() {
                assert_eq!(s.stripes, n);
                assert!((0..100).all(|k| s.owns_stripe(k) == (k % n == i as u64)), "{n} {i}");
            }
        }
    }

    #[test]
    fn the_union_of_the_segments_is_the_one_machine_schedule() {
        let ms = Duration::from_millis;
        let shapes = [
            RateShape::steps(&[(ms(2000), 1000.0)]).unwrap(),
            RateShape::steps(&[(ms(500), 300.0), (ms(700), 1700.0), (ms(300), 0.0), (ms(100), 50.0)]).unwrap(),
            RateShape::segments(vec![
                Segment { duration: ms(1000), from: 0.0, to: 2000.0 },
                Segment { duration: ms(1000), from: 2000.0, to: 500.0 },
            ])
            .unwrap(),
        ];
        let uneven = [("0", "1/3"), ("1/3", "0.5"), ("0.5", "1")]
            .map(|(a, b)| ExecutionSegment::new(f(a), f(b), Some(6)).unwrap());
        for shape in shapes {
            for arrivals in [Arrivals::Uniform, Arrivals::Poisson { seed: 11 }] {
                for parts in [even(1), even(2), even(3), even(5), uneven.to_vec()] {
                    union_is_the_whole(shape.clone(), arrivals, &parts);
                }
            }
        }
    }

    #[test]
    fn a_segment_requests_its_fraction_of_the_rate() {
        let s = ExecutionSegment::parse("1/4:1", None).unwrap();
        let p = Shared::new(Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform), s, None);
        assert_eq!(p.requested_calls(Duration::ZERO, Duration::from_secs(2)), Some(1500.0));
    }
}
