//! The one grammar of durations: a number and a unit, `40ms`, `1.5s`, `250us`, `2m`, `1h`
//! (`ns`, `us` or `µs`, `ms`, `s`, `m` or `min`, `h`; a space between them is allowed). A number
//! without a unit is seconds where a flag allows it ([`Bare::Seconds`]) and refused where a unit
//! avoids a mistake ([`Bare::OnlyZero`]: `rtt=40` is refused, `0` is fine). Every error is one
//! line that quotes the text.

use std::time::Duration;

/// How a number without a unit reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bare {
    /// As seconds (`callbench load -z 10`).
    Seconds,
    /// Refused, except `0`.
    OnlyZero,
}

/// Why a text is not a duration of the grammar; each says it in one line, naming the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("{0:?} must not be negative")]
    Negative(String),
    #[error("bad duration {0:?} (e.g. 40ms, 10s, 2m)")]
    NotANumber(String),
    #[error("{0:?} needs a unit: us, ms, s, m or h (e.g. 40ms)")]
    NoUnit(String),
    #[error("bad duration unit in {0:?} (use ns, us, ms, s, m or h)")]
    BadUnit(String),
    #[error("{text:?} is too long: at most {max}")]
    TooLong { text: String, max: String },
}

/// The message, for callers whose own errors are still strings.
impl From<DurationError> for String {
    fn from(e: DurationError) -> String {
        e.to_string()
    }
}

/// Parses `text`; at most `max`.
pub fn parse(text: &str, bare: Bare, max: Duration) -> Result<Duration, DurationError> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(DurationError::Negative(text.to_string()));
    }
    let split = t.find(|c: char| c.is_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.trim().parse().map_err(|_| DurationError::NotANumber(text.to_string()))?;
    if value.is_nan() {
        return Err(DurationError::NotANumber(text.to_string()));
    }
    let scale = match unit {
        "" if bare == Bare::Seconds || value == 0.0 => 1.0,
        "" => return Err(DurationError::NoUnit(text.to_string())),
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(DurationError::BadUnit(text.to_string())),
    };
    // Judged as seconds first: a number past Duration's range does not convert (found by fuzzing).
    match Duration::try_from_secs_f64(value * scale) {
        Ok(d) if d <= max => Ok(d),
        _ => Err(DurationError::TooLong { text: text.to_string(), max: show(max) }),
    }
}

/// `d` written in the grammar, in its largest unit up to seconds (`1.5ms`, `250us`, `2s`, `0`):
/// [`parse`] reads it back.
pub fn show(d: Duration) -> String {
    let us = d.as_nanos() as f64 / 1e3;
    if us == 0.0 {
        "0".into()
    } else if us < 1.0 {
        format!("{}ns", d.as_nanos())
    } else if us < 1000.0 {
        format!("{}us", trim(us))
    } else if us < 1e6 {
        format!("{}ms", trim(us / 1e3))
    } else {
        format!("{}s", trim(us / 1e6))
    }
}

/// A number without trailing zeros (up to 3 decimals).
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(10_000);

    #[test]
    fn every_unit_reads() {
        let ok = |t: &str| parse(t, Bare::OnlyZero, MAX).unwrap();
        assert_eq!(ok("40ms"), Duration::from_millis(40));
        assert_eq!(ok("1.5ms"), Duration::from_micros(1500));
        assert_eq!(ok("250us"), Duration::from_micros(250));
        assert_eq!(ok("250µs"), Duration::from_micros(250));
        assert_eq!(ok("500ns"), Duration::from_nanos(500));
        assert_eq!(ok("0.1s"), Duration::from_millis(100));
        assert_eq!(ok(" 2 m "), Duration::from_secs(120));
        assert_eq!(ok("2min"), Duration::from_secs(120));
        assert_eq!(ok("1h"), Duration::from_secs(3600));
        assert_eq!(ok("0"), Duration::ZERO);
    }

    #[test]
    fn a_bare_number_is_seconds_only_where_allowed() {
        assert_eq!(parse("10", Bare::Seconds, MAX), Ok(Duration::from_secs(10)));
        assert_eq!(parse("10", Bare::OnlyZero, MAX), Err(DurationError::NoUnit("10".into())));
    }

    #[test]
    fn bad_durations_are_one_line_errors() {
        let huge = format!("{}s", "9".repeat(400));
        for (text, expected) in [
            ("-1ms", "must not be negative"),
            ("-0", "must not be negative"),
            ("ms", "bad duration"),
            ("1.2.3s", "bad duration"),
            ("inf s", "bad duration"),
            ("NaNs", "bad duration"),
            ("10 parsecs", "unit"),
            ("3 hours", "unit"),
            ("3h", "too long"),
            ("333333333333333333333333333330ms", "too long"),
            (huge.as_str(), "too long"),
        ] {
            let err = parse(text, Bare::Seconds, MAX).unwrap_err().to_string();
            assert!(err.contains(expected) && !err.contains('\n'), "{text}: {err}");
        }
    }

    #[test]
    fn what_is_shown_reads_back() {
        for d in [0, 1, 999, 1_000, 250_000, 1_500_000, 2_000_000_000, 1_234_567_000_000] {
            let d = Duration::from_nanos(d);
            assert_eq!(parse(&show(d), Bare::OnlyZero, Duration::MAX), Ok(d), "{}", show(d));
        }
        assert_eq!((show(Duration::from_micros(1500)), show(Duration::from_secs(2))), ("1.5ms".into(), "2s".into()));
    }
}
