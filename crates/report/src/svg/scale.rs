//! Axes' domains and ticks: linear with round 1-2-5 steps, logarithmic by decades, and the
//! HdrHistogram "nines" scale for latency percentiles.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Linear,
    Log,
}

/// A domain mapped onto an axis (positions as a fraction 0..=1 of its length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub kind: Kind,
    pub min: f64,
    pub max: f64,
}

/// Values spanning more than this factor go on a log scale.
pub const LOG_SPAN: f64 = 20.0;

impl Scale {
    /// Linear over [min, max] widened to round steps.
    pub fn linear(min: f64, max: f64) -> Scale {
        let (min, max) = if min.is_finite() && max.is_finite() { (min.min(max), min.max(max)) } else { (0.0, 1.0) };
        let step = nice_step(max - min);
        let lo = (min / step).floor() * step;
        let mut hi = (max / step).ceil() * step;
        if hi <= lo {
            hi = lo + step;
        }
        Scale { kind: Kind::Linear, min: lo, max: hi }
    }

    /// Linear from 0 (bars start at zero, or the eye misreads their ratio).
    pub fn from_zero(max: f64) -> Scale {
        Scale::linear(0.0, if max > 0.0 { max } else { 1.0 })
    }

    /// Logarithmic over whole decades around [min, max] (both must be > 0).
    pub fn log(min: f64, max: f64) -> Scale {
        let (min, max) = (min.max(f64::MIN_POSITIVE), max.max(f64::MIN_POSITIVE));
        let lo = 10f64.powf(min.log10().floor());
        let mut hi = 10f64.powf(max.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        Scale { kind: Kind::Log, min: lo, max: hi }
    }

    /// Log when the positive values span more than [`LOG_SPAN`]; otherwise linear (from zero when
    /// `from_zero`).
    pub fn auto(values: &[f64], from_zero: bool) -> Scale {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if finite.is_empty() {
            Scale::from_zero(1.0)
        } else if min > 0.0 && max / min > LOG_SPAN {
            Scale::log(min, max)
        } else if from_zero {
            Scale::from_zero(max)
        } else {
            Scale::linear(min, max)
        }
    }

    /// Where `v` sits along the axis, 0 at `min` and 1 at `max` (clamped).
    pub fn fraction(&self, v: f64) -> f64 {
        let f = match self.kind {
            Kind::Linear => (v - self.min) / (self.max - self.min),
            Kind::Log if v <= 0.0 => 0.0,
            Kind::Log => (v.ln() - self.min.ln()) / (self.max.ln() - self.min.ln()),
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Tick values: every step of a linear scale; decades of a log one (with 2× and 5× when it
    /// covers two decades or fewer).
    pub fn ticks(&self) -> Vec<f64> {
        match self.kind {
            Kind::Linear => {
                let step = nice_step(self.max - self.min);
                let n = ((self.max - self.min) / step).round() as i64;
                (0..=n).map(|i| round_to_step(self.min + i as f64 * step, step)).collect()
            }
            Kind::Log => {
                let (first, last) = (self.min.log10().round() as i32, self.max.log10().round() as i32);
                let mantissas: &[f64] = if last - first <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                let mut ticks = vec![];
                for e in first..=last {
                    for m in mantissas {
                        let v = m * 10f64.powi(e);
                        if v <= self.max * (1.0 + 1e-9) {
                            ticks.push(v);
                        }
                    }
                }
                ticks
            }
        }
    }
}

/// A round step (1, 2 or 5 × 10ⁿ) that cuts `range` into about five intervals.
pub fn nice_step(range: f64) -> f64 {
    if !(range.is_finite() && range > 0.0) {
        return 1.0;
    }
    let raw = range / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let unit = raw / magnitude;
    let nice = if unit <= 1.0 {
        1.0
    } else if unit <= 2.0 {
        2.0
    } else if unit <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// Removes the float dust of repeated additions (0.30000000000000004 → 0.3).
fn round_to_step(v: f64, step: f64) -> f64 {
    let decimals = (-step.log10().floor()).max(0.0) as i32 + 1;
    let f = 10f64.powi(decimals);
    (v * f).round() / f
}

/// A percentile (0–100) on the nines scale, log₁₀(1 / (1 − p)): 90% → 1, 99% → 2, 99.9% → 3.
/// 100% (the maximum) is infinitely far: callers clamp it to the axis end.
pub fn nines(percentile: f64) -> f64 {
    let rest = 1.0 - percentile / 100.0;
    if rest <= 0.0 {
        f64::INFINITY
    } else {
        -rest.log10()
    }
}

/// The labelled ticks of a nines axis that reaches `max_nines`: 50%, 90%, 99%, 99.9%...
pub fn nines_ticks(max_nines: f64) -> Vec<(f64, String)> {
    ["50%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        .iter()
        .map(|label| (nines(label.trim_end_matches('%').parse().unwrap_or(50.0)), label.to_string()))
        .filter(|(x, _)| *x <= max_nines + 1e-9)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_scales_round_to_1_2_5_steps() {
        let s = Scale::from_zero(42_180.0);
        assert_eq!((s.min, s.max), (0.0, 50_000.0));
        assert_eq!(s.ticks(), vec![0.0, 10_000.0, 20_000.0, 30_000.0, 40_000.0, 50_000.0]);
        let s = Scale::from_zero(0.73);
        assert_eq!(s.ticks(), vec![0.0, 0.2, 0.4, 0.6, 0.8]);
        assert_eq!(nice_step(7.0), 2.0);
        assert_eq!(Scale::from_zero(0.0).max, 1.0);
    }

    #[test]
    fn log_scales_cover_whole_decades() {
        let s = Scale::log(3.2, 870.0);
        assert_eq!((s.min, s.max), (1.0, 1000.0));
        assert_eq!(s.ticks(), vec![1.0, 10.0, 100.0, 1000.0]);
        let s = Scale::log(12.0, 80.0);
        assert_eq!(s.ticks(), vec![10.0, 20.0, 50.0, 100.0]);
        assert!((s.fraction(31.622_776_6) - 0.5).abs() < 1e-6);
        assert_eq!(s.fraction(0.0), 0.0);
    }

    #[test]
    fn log_only_when_values_span_more_than_20x() {
        assert_eq!(Scale::auto(&[10.0, 100_000.0], true).kind, Kind::Log);
        assert_eq!(Scale::auto(&[10.0, 150.0], true).kind, Kind::Linear);
        assert_eq!(Scale::auto(&[0.0, 1000.0], true).kind, Kind::Linear);
        assert_eq!(Scale::auto(&[], true), Scale::from_zero(1.0));
    }

    #[test]
    fn nines_scale() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert!((nines(50.0) - 2f64.log10()).abs() < 1e-9);
        assert_eq!(nines(0.0), 0.0);
        assert!(nines(100.0).is_infinite());
        let labels: Vec<String> = nines_ticks(4.0).into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["50%", "90%", "99%", "99.9%", "99.99%"]);
    }
}
