//! The load model as data: when call n should start.

use crate::rate::RateShape;
use callbench_primitives::rng::Rng;
use std::time::Duration;

/// When the next call should start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// As soon as a concurrency slot is free (closed loop); latency counts from the actual start.
    Free,
    /// At this offset from the run's start (open loop); latency counts from here.
    At(Duration),
    /// The schedule is over.
    End,
}

/// Hands out start times in call order. `Send` so one pacer can serve every worker of a run.
pub trait Pacer: Send {
    fn next(&mut self) -> Next;

    /// Calls the schedule intends in [from, to); None for closed loop, which requests no rate.
    fn requested_calls(&self, from: Duration, to: Duration) -> Option<f64>;

    /// Whether the schedule ends by itself (so bounds the run without a stop condition).
    fn ends(&self) -> bool {
        false
    }

    /// When the schedule ends, if it does: the end of the measured window.
    fn end(&self) -> Option<Duration> {
        None
    }
}

/// A pacer chosen at run time.
impl<P: Pacer + ?Sized> Pacer for Box<P> {
    fn next(&mut self) -> Next {
        (**self).next()
    }
    fn requested_calls(&self, from: Duration, to: Duration) -> Option<f64> {
        (**self).requested_calls(from, to)
    }
    fn ends(&self) -> bool {
        (**self).ends()
    }
    fn end(&self) -> Option<Duration> {
        (**self).end()
    }
}

/// Closed loop: every call starts when the previous call of its slot ends.
#[derive(Debug, Clone, Copy, Default)]
pub struct Closed;

impl Pacer for Closed {
    fn next(&mut self) -> Next {
        Next::Free
    }
    fn requested_calls(&self, _: Duration, _: Duration) -> Option<f64> {
        None
    }
}

/// How calls are spread at a given rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Evenly spaced: 1000/s starts a call every millisecond.
    Uniform,
    /// A Poisson process (exponential gaps), reproducible from the seed.
    Poisson { seed: u64 },
}

/// Open loop: starts follow a rate shape, whatever the answers do.
#[derive(Debug, Clone)]
pub struct Open {
    shape: RateShape,
    rng: Option<Rng>,
    /// Cumulative count Λ at the next call: n for uniform, a sum of exponentials for Poisson.
    position: f64,
}

impl Open {
    pub fn new(shape: RateShape, arrivals: Arrivals) -> Self {
        let mut rng = match arrivals {
            Arrivals::Uniform => None,
            Arrivals::Poisson { seed } => Some(Rng::new(seed)),
        };
        let position = rng.as_mut().map_or(0.0, Rng::next_exp);
        Open { shape, rng, position }
    }
}

impl Pacer for Open {
    fn next(&mut self) -> Next {
        let Some(at) = self.shape.time_of(self.position) else { return Next::End };
        self.position += self.rng.as_mut().map_or(1.0, Rng::next_exp);
        Next::At(at)
    }
    fn requested_calls(&self, from: Duration, to: Duration) -> Option<f64> {
        Some(self.shape.calls_before(to) - self.shape.calls_before(from))
    }
    fn ends(&self) -> bool {
        self.shape.ends()
    }
    fn end(&self) -> Option<Duration> {
        self.shape.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(p: &mut impl Pacer, n: usize) -> Vec<Duration> {
        (0..n).map(|_| if let Next::At(t) = p.next() { t } else { panic!("not open") }).collect()
    }

    #[test]
    fn closed_loop_is_always_free() {
        assert_eq!(Closed.next(), Next::Free);
        assert_eq!(Closed.requested_calls(Duration::ZERO, Duration::from_secs(1)), None);
    }

    #[test]
    fn constant_1000_per_s_is_one_ms_apart() {
        let mut p = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Uniform);
        let t = times(&mut p, 1001);
        assert!(t.iter().enumerate().all(|(i, &t)| t == Duration::from_millis(i as u64)));
        assert_eq!(p.requested_calls(Duration::from_secs(1), Duration::from_secs(3)), Some(2000.0));
    }

    #[test]
    fn poisson_mean_interval_within_2_percent() {
        let mut p = Open::new(RateShape::constant(1000.0).unwrap(), Arrivals::Poisson { seed: 42 });
        let t = times(&mut p, 100_001);
        let mean = (t[100_000] - t[0]).as_secs_f64() / 100_000.0;
        assert!((mean / 0.001 - 1.0).abs() < 0.02, "{mean}");
        assert!(t.windows(2).all(|w| w[0] <= w[1]));
        // Gaps vary (exponential: about 63% shorter than the mean).
        let short = t.windows(2).filter(|w| w[1] - w[0] < Duration::from_millis(1)).count() as f64 / 100_000.0;
        assert!((short - 0.632).abs() < 0.02, "{short}");
    }

    #[test]
    fn same_seed_same_arrivals() {
        let shape = RateShape::constant(500.0).unwrap();
        let a = times(&mut Open::new(shape.clone(), Arrivals::Poisson { seed: 9 }), 50);
        let b = times(&mut Open::new(shape, Arrivals::Poisson { seed: 9 }), 50);
        assert_eq!(a, b);
    }

    #[test]
    fn steps_switch_rate_then_end() {
        let ms = Duration::from_millis;
        let shape = RateShape::steps(&[(ms(100), 100.0), (ms(100), 1000.0)]).unwrap();
        let mut p = Open::new(shape, Arrivals::Uniform);
        let t = times(&mut p, 110);
        assert_eq!(t[9], ms(90));
        assert_eq!(t[10], ms(100));
        assert_eq!(t[11], ms(101));
        assert_eq!(t[109], ms(199));
        assert_eq!(p.next(), Next::End);
    }
}
