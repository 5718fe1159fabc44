//! Pass/fail conditions on a run's figures for CI (`--threshold 'p99<200ms'`, as k6's thresholds):
//! each one is met or crossed with its measured value, and a crossed one makes the run exit 99.
//!
//! The language: `METRIC OP VALUE`, OP one of `<`, `<=`, `>`, `>=`.
//! - `pN` (`p50`, `p99`, `p99.9`…), `mean`, `max`: the latency (corrected for coordinated omission,
//!   the report's headline), with a unit (`ns`, `us`, `µs`, `ms`, `s`);
//! - `errors`: failed calls, as a share of all calls (`errors<0.1%`) or a count (`errors<=5`);
//! - `calls_per_s`: successful calls a second over the measured window (`calls_per_s>5000`, `2.5k`).

use crate::error::LoadError;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::fmt;

/// A failing threshold's exit code: k6's, which CI scripts already tell from other failures.
pub const CROSSED_EXIT: i32 = 99;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A latency quantile (0 < q ≤ 1).
    Quantile(f64),
    Mean,
    Max,
    /// Failed calls over all calls.
    ErrorShare,
    ErrorCount,
    CallsPerS,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Below,
    AtMost,
    Above,
    AtLeast,
}

impl Op {
    fn holds(self, measured: f64, limit: f64) -> bool {
        match self {
            Op::Below => measured < limit,
            Op::AtMost => measured <= limit,
            Op::Above => measured > limit,
            Op::AtLeast => measured >= limit,
        }
    }
}

/// One condition, as written and as parsed; latency limits in µs, shares as fractions.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub text: String,
    pub metric: Metric,
    pub op: Op,
    pub limit: f64,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What a run measured, for the thresholds to be judged on.
pub struct Measured<'a> {
    /// Latency of the successful calls (µs), corrected.
    pub latency_us: &'a Histogram<u64>,
    pub ok: u64,
    pub errors: u64,
    pub calls_per_s: f64,
}

/// A threshold judged: what was measured against it, and whether it held.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Judged {
    /// The condition as written.
    pub threshold: String,
    /// The measured value in the condition's unit (µs for latency, % or a count for errors,
    /// calls/s); null when there was nothing to measure (no successful call for a latency).
    pub measured: Option<f64>,
    /// The measured value as the condition writes it (`12.3ms`, `0.5%`).
    pub measured_text: String,
    pub met: bool,
}

/// Parses `METRIC OP VALUE` (see the module's notes); the error names the text and what is allowed.
pub fn parse(text: &str) -> Result<Threshold, LoadError> {
    let bad = |why: &str| LoadError::Settings(format!("bad threshold {text:?}: {why}"));
    let t = text.trim();
    let at = t.find(['<', '>']).ok_or_else(|| bad("write METRIC<VALUE or METRIC>VALUE, e.g. p99<200ms"))?;
    let (left, rest) = t.split_at(at);
    let (op, right) = match rest.as_bytes() {
        [b'<', b'=', ..] => (Op::AtMost, &rest[2..]),
        [b'>', b'=', ..] => (Op::AtLeast, &rest[2..]),
        [b'<', ..] => (Op::Below, &rest[1..]),
        _ => (Op::Above, &rest[1..]),
    };
    let (left, right) = (left.trim(), right.trim());
    let number = |s: &str| -> Result<f64, LoadError> {
        let v: f64 = s.trim().parse().map_err(|_| bad(&format!("{s:?} is not a number")))?;
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(bad("the value must be a finite number ≥ 0"))
        }
    };
    let (metric, limit) = match left {
        "mean" => (Metric::Mean, latency_us(right).map_err(|e| bad(&e))?),
        "max" => (Metric::Max, latency_us(right).map_err(|e| bad(&e))?),
        "errors" => match right.strip_suffix('%') {
            Some(percent) => {
                let share = number(percent)? / 100.0;
                if share > 1.0 {
                    return Err(bad("a share of errors is at most 100%"));
                }
                (Metric::ErrorShare, share)
            }
            None => (Metric::ErrorCount, number(right)?),
        },
        "calls_per_s" => {
            let (digits, scale) = right.strip_suffix(['k', 'K']).map_or((right, 1.0), |d| (d, 1e3));
            (Metric::CallsPerS, number(digits)? * scale)
        }
        quantile => {
            let percent = quantile
                .strip_prefix('p')
                .and_then(|p| p.parse::<f64>().ok())
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| {
                    bad(&format!("unknown metric {quantile:?}: pN (p50, p99.9…), mean, max, errors or calls_per_s"))
                })?;
            (Metric::Quantile(percent / 100.0), latency_us(right).map_err(|e| bad(&e))?)
        }
    };
    Ok(Threshold { text: t.to_string(), metric, op, limit })
}

/// A latency with its unit, in µs.
fn latency_us(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let value: f64 = digits.parse().map_err(|_| format!("{t:?} is not a latency (e.g. 200ms)"))?;
    let scale = match unit.trim() {
        "ns" => 1e-3,
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "" => return Err(format!("{t:?} has no unit: write ns, us, ms or s")),
        other => return Err(format!("unknown unit {other:?}: ns, us, ms or s")),
    };
    Ok(value * scale)
}

/// A latency in µs as a person reads it.
fn latency_text(us: f64) -> String {
    match us {
        us if us >= 1e6 => format!("{:.3}s", us / 1e6),
        us if us >= 1e3 => format!("{:.3}ms", us / 1e3),
        us => format!("{us:.0}µs"),
    }
}

impl Threshold {
    /// Judges this condition on what was measured. A latency with no successful call to measure
    /// is crossed (nothing met it); so is any condition on a run that made no call.
    pub fn judge(&self, m: &Measured<'_>) -> Judged {
        let all = m.ok + m.errors;
        let measured = match self.metric {
            Metric::Quantile(q) => (m.ok > 0).then(|| m.latency_us.value_at_quantile(q) as f64),
            Metric::Mean => (m.ok > 0).then(|| m.latency_us.mean()),
            Metric::Max => (m.ok > 0).then(|| m.latency_us.max() as f64),
            Metric::ErrorShare => (all > 0).then(|| m.errors as f64 / all as f64),
            Metric::ErrorCount => (all > 0).then_some(m.errors as f64),
            Metric::CallsPerS => (all > 0).then_some(m.calls_per_s),
        };
        let latency = matches!(self.metric, Metric::Quantile(_) | Metric::Mean | Metric::Max);
        self.judge_value(measured.ok_or(if latency { "no successful call" } else { "no call" }.to_string()))
    }

    /// Judges this condition on a value measured elsewhere (a run's cell: its medians), in the
    /// metric's unit (µs, a share as a fraction, a count, calls/s), or why there is none (crossed).
    pub fn judge_value(&self, measured: Result<f64, String>) -> Judged {
        let (measured, why) = match measured {
            Ok(v) => (Some(v), String::new()),
            Err(why) => (None, why),
        };
        let measured_text = match (measured, self.metric) {
            (None, _) => why,
            (Some(v), Metric::Quantile(_) | Metric::Mean | Metric::Max) => latency_text(v),
            (Some(v), Metric::ErrorShare) => format!("{}%", round(v * 100.0)),
            (Some(v), Metric::ErrorCount) => format!("{v:.0}"),
            (Some(v), Metric::CallsPerS) => format!("{v:.1}"),
        };
        let met = measured.is_some_and(|v| self.op.holds(v, self.limit));
        let shown = match self.metric {
            Metric::ErrorShare => measured.map(|v| v * 100.0),
            _ => measured,
        };
        Judged { threshold: self.text.clone(), measured: shown, measured_text, met }
    }
}

/// A share in percent with the digits that tell it apart from its neighbours.
fn round(percent: f64) -> String {
    let text = format!("{percent:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One line per threshold: `p99<200ms: met (12.3ms)` or `… crossed (…)`.
pub fn lines(judged: &[Judged]) -> Vec<String> {
    judged
        .iter()
        .map(|j| format!("{}: {} ({})", j.threshold, if j.met { "met" } else { "crossed" }, j.measured_text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        values.iter().for_each(|v| h.record(*v).unwrap());
        h
    }

    #[test]
    fn the_language_parses_every_metric_and_operator() {
        let t = parse("p99<200ms").unwrap();
        assert_eq!((t.metric, t.op, t.limit), (Metric::Quantile(0.99), Op::Below, 200_000.0));
        let t = parse(" p99.9 <= 1.5s ").unwrap();
        assert!(matches!(t.metric, Metric::Quantile(q) if (q - 0.999).abs() < 1e-12), "{t:?}");
        assert_eq!((t.op, t.limit, t.text.as_str()), (Op::AtMost, 1_500_000.0, "p99.9 <= 1.5s"));
        assert_eq!(parse("mean<250us").unwrap().limit, 250.0);
        assert_eq!(parse("max<=2µs").unwrap().limit, 2.0);
        assert_eq!(parse("p50<500ns").unwrap().limit, 0.5);
        let t = parse("errors<0.1%").unwrap();
        assert_eq!(t.metric, Metric::ErrorShare);
        assert!((t.limit - 0.001).abs() < 1e-12);
        assert_eq!(parse("errors<=5").unwrap().metric, Metric::ErrorCount);
        let t = parse("calls_per_s>=2.5k").unwrap();
        assert_eq!((t.metric, t.op, t.limit), (Metric::CallsPerS, Op::AtLeast, 2500.0));
        assert_eq!(parse("calls_per_s>5000").unwrap().op, Op::Above);
    }

    #[test]
    fn a_bad_threshold_is_one_line_naming_it() {
        for (text, needle) in [
            ("p99", "write METRIC<VALUE"),
            ("p99<200", "has no unit"),
            ("p99<200 parsecs", "unknown unit"),
            ("p0<1ms", "unknown metric"),
            ("p101<1ms", "unknown metric"),
            ("latency<1ms", "unknown metric"),
            ("errors<150%", "at most 100%"),
            ("errors<-1", "≥ 0"),
            ("calls_per_s>fast", "not a number"),
            ("calls_per_s>inf", "finite"),
        ] {
            let LoadError::Settings(e) = parse(text).unwrap_err() else { panic!("{text}: a settings error") };
            assert!(e.contains(text) && e.contains(needle) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn judging_compares_the_measured_value_with_the_limit() {
        let h = histogram(&(1..=1000).collect::<Vec<_>>());
        let m = Measured { latency_us: &h, ok: 1000, errors: 1, calls_per_s: 4000.0 };
        let judge = |text: &str| parse(text).unwrap().judge(&m);
        assert!(judge("p99<1ms").met);
        assert!(!judge("p99<900us").met);
        assert_eq!(judge("p99<900us").measured, Some(990.0));
        assert_eq!(judge("p99<900us").measured_text, "990µs");
        assert!(judge("max<=1ms").met && !judge("max<1ms").met);
        assert!(judge("errors<0.1%").met && !judge("errors<0.05%").met);
        assert_eq!(judge("errors<0.1%").measured_text, "0.0999%");
        assert!(judge("errors<=1").met && !judge("errors<1").met);
        assert!(judge("calls_per_s>3k").met && !judge("calls_per_s>4000").met);
        assert_eq!(lines(&[judge("p99<900us")]), ["p99<900us: crossed (990µs)"]);
    }

    #[test]
    fn nothing_measured_crosses_every_threshold() {
        let h = histogram(&[]);
        let failed = Measured { latency_us: &h, ok: 0, errors: 20, calls_per_s: 0.0 };
        let judged = parse("p99<1s").unwrap().judge(&failed);
        assert!(!judged.met && judged.measured.is_none(), "{judged:?}");
        assert_eq!(judged.measured_text, "no successful call");
        // A share of errors is still measured: all 20 failed.
        assert_eq!(parse("errors<=100%").unwrap().judge(&failed).measured, Some(100.0));
        let none = Measured { latency_us: &h, ok: 0, errors: 0, calls_per_s: 0.0 };
        let judged = parse("errors<1%").unwrap().judge(&none);
        assert!(!judged.met && judged.measured_text == "no call", "{judged:?}");
    }
}
