//! A rate over time (calls/s) as segments: constant, steps, linear ramps.
//!
//! Schedules come from the cumulative number of calls Λ(t) = ∫ rate: call n (counting from 0) is
//! intended at Λ⁻¹(n) for even spacing, or at Λ⁻¹(Sₙ) with Sₙ a sum of unit exponentials for Poisson
//! arrivals (the time-rescaling theorem), so one inversion serves every shape.

use crate::EngineError;
use std::time::Duration;

/// `duration` during which the rate goes linearly from `from` to `to` (equal for a step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub duration: Duration,
    pub from: f64,
    pub to: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RateShape {
    segments: Vec<Segment>,
    /// Rate kept after the last segment (None: the schedule ends there).
    then: Option<f64>,
}

impl RateShape {
    /// `rate` calls/s for ever.
    pub fn constant(rate: f64) -> Result<Self, EngineError> {
        check(rate).map_err(EngineError::Settings)?;
        Ok(RateShape { segments: Vec::new(), then: Some(rate) })
    }

    /// Segments one after the other; the schedule ends after the last.
    pub fn segments(segments: Vec<Segment>) -> Result<Self, EngineError> {
        for s in &segments {
            check(s.from).map_err(EngineError::Settings)?;
            check(s.to).map_err(EngineError::Settings)?;
        }
        if segments.iter().all(|s| s.from == 0.0 && s.to == 0.0) {
            return Err(EngineError::Settings("a rate shape needs some segment with a rate above 0".into()));
        }
        Ok(RateShape { segments, then: None })
    }

    /// Steps of constant rate: `(duration, rate)`.
    pub fn steps(steps: &[(Duration, f64)]) -> Result<Self, EngineError> {
        Self::segments(steps.iter().map(|&(duration, r)| Segment { duration, from: r, to: r }).collect())
    }

    /// Whether no call is intended after some time.
    pub fn ends(&self) -> bool {
        self.then.is_none_or(|rate| rate == 0.0)
    }

    /// When the schedule ends, if it does.
    pub fn end(&self) -> Option<Duration> {
        self.ends().then(|| self.segments.iter().map(|s| s.duration).sum())
    }

    /// Λ(t): calls intended in [0, t).
    pub fn calls_before(&self, t: Duration) -> f64 {
        let mut left = t.as_secs_f64();
        let mut calls = 0.0;
        for s in &self.segments {
            let d = s.duration.as_secs_f64();
            if left <= d {
                return calls + s.from * left + (s.to - s.from) / (2.0 * d) * left * left;
            }
            calls += d * (s.from + s.to) / 2.0;
            left -= d;
        }
        calls + self.then.unwrap_or(0.0) * left
    }

    /// Λ⁻¹(x): when the cumulative count reaches `x`; None once the schedule has ended before that.
    pub fn time_of(&self, x: f64) -> Option<Duration> {
        let mut left = x;
        let mut t = 0.0;
        for s in &self.segments {
            let d = s.duration.as_secs_f64();
            let area = d * (s.from + s.to) / 2.0;
            if left < area {
                // Solve from·τ + a·τ² = left, a = (to − from)/(2d), in the form stable when a → 0.
                let a = (s.to - s.from) / (2.0 * d);
                let root = s.from + (s.from * s.from + 4.0 * a * left).sqrt();
                let tau = if left > 0.0 { 2.0 * left / root } else { 0.0 }; // 0/0 at a ramp from rate 0
                return Some(secs(t + tau.min(d)));
            }
            left -= area;
            t += d;
        }
        match self.then {
            Some(rate) if rate > 0.0 => Some(secs(t + left / rate)),
            _ => None,
        }
    }
}

/// Seconds to a Duration, rounded to the nearest nanosecond (so 1000/s is exactly 1 ms apart).
fn secs(s: f64) -> Duration {
    Duration::from_nanos((s * 1e9).round() as u64)
}

fn check(rate: f64) -> Result<(), String> {
    if rate.is_finite() && rate >= 0.0 {
        Ok(())
    } else {
        Err(format!("a rate must be a finite number of calls/s ≥ 0, not {rate}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn constant_rate_is_even_spacing() {
        let r = RateShape::constant(1000.0).unwrap();
        assert_eq!(r.time_of(0.0), Some(MS(0)));
        assert_eq!(r.time_of(1.0), Some(MS(1)));
        assert_eq!(r.time_of(2500.0), Some(MS(2500)));
        assert_eq!(r.calls_before(MS(1500)), 1500.0);
    }

    #[test]
    fn steps_switch_at_the_boundary_and_end() {
        let r = RateShape::steps(&[(MS(1000), 100.0), (MS(1000), 1000.0)]).unwrap();
        assert_eq!(r.time_of(99.0), Some(MS(990)));
        assert_eq!(r.time_of(100.0), Some(MS(1000)));
        assert_eq!(r.time_of(101.0), Some(MS(1001)));
        assert_eq!(r.time_of(1099.0), Some(MS(1999)));
        assert_eq!(r.time_of(1100.0), None);
        assert_eq!(r.calls_before(MS(1500)), 600.0);
    }

    #[test]
    fn linear_ramp_follows_the_integral() {
        // 0 → 1000/s over 1 s: Λ(t) = 500 t², so call 125 is at 0.5 s and call 500 ends the ramp.
        let r = RateShape::segments(vec![Segment { duration: MS(1000), from: 0.0, to: 1000.0 }]).unwrap();
        assert_eq!(r.calls_before(MS(500)), 125.0);
        let t = r.time_of(125.0).unwrap().as_secs_f64();
        assert!((t - 0.5).abs() < 1e-9, "{t}");
        assert_eq!(r.time_of(500.0), None);
        assert_eq!(r.time_of(0.0), Some(MS(0)));
    }

    #[test]
    fn zero_rate_gaps_are_skipped() {
        let r = RateShape::steps(&[(MS(100), 10.0), (MS(500), 0.0), (MS(100), 10.0)]).unwrap();
        assert_eq!(r.time_of(1.0), Some(MS(600)));
    }

    #[test]
    fn bad_rates_are_refused() {
        assert!(RateShape::constant(f64::NAN).is_err());
        assert!(RateShape::constant(-1.0).is_err());
        assert!(RateShape::steps(&[(MS(100), 0.0)]).is_err());
    }
}
