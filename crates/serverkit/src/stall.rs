//! A server that stalls now and then, for the experiments that show which load tools hide stalls:
//! `CALLBENCH_STALL="100ms every 1s"` makes the thread answering the first call after each period
//! sleep for the pause before it answers — a stop-the-world pause, as a garbage collector's, on a
//! server that serves from one thread. Unset: one branch on a value read once.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable with the stall: `PAUSE every PERIOD` (`100ms every 1s`).
pub const ENV: &str = "CALLBENCH_STALL";

struct Plan {
    pause: Duration,
    every: Duration,
    next: Mutex<Option<Instant>>,
}

static PLAN: OnceLock<Option<Plan>> = OnceLock::new();

/// Reads the stall from the environment; exits with a one-line message when it is malformed.
pub fn init() {
    PLAN.get_or_init(|| {
        let text = std::env::var(ENV).ok()?;
        let (pause, every) = parse(&text).unwrap_or_else(|e| crate::fail(format!("{ENV}={text}: {e}")));
        Some(Plan { pause, every, next: Mutex::new(None) })
    });
}

/// Before answering a call: sleeps for the pause when a period has passed since the last one
/// (the first period starts at the first call).
pub fn maybe() {
    init();
    let Some(Some(plan)) = PLAN.get() else { return };
    let now = Instant::now();
    let due = {
        let mut next = plan.next.lock().unwrap_or_else(|p| p.into_inner());
        match *next {
            None => {
                *next = Some(now + plan.every);
                false
            }
            Some(at) if now >= at => {
                *next = Some(now + plan.every);
                true
            }
            Some(_) => false,
        }
    };
    if due {
        std::thread::sleep(plan.pause);
    }
}

/// A stall that is not `PAUSE every PERIOD` with a pause above 0 and shorter than its period; the
/// message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StallError(pub String);

/// `100ms every 1s` → (100 ms, 1 s); the pause must be shorter than the period.
pub fn parse(text: &str) -> Result<(Duration, Duration), StallError> {
    parse_text(text).map_err(StallError)
}

fn parse_text(text: &str) -> Result<(Duration, Duration), String> {
    let (pause, every) = text.split_once(" every ").ok_or("expected PAUSE every PERIOD, e.g. 100ms every 1s")?;
    let (pause, every) = (duration(pause.trim())?, duration(every.trim())?);
    if pause.is_zero() || pause >= every {
        return Err("the pause must be above 0 and shorter than its period".into());
    }
    Ok((pause, every))
}

/// A pause or a period in the one grammar (`100ms`, `1s`), with its unit.
fn duration(text: &str) -> Result<Duration, String> {
    use callbench_primitives::duration::{parse, Bare};
    Ok(parse(text, Bare::OnlyZero, Duration::from_secs(3600))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_parse_and_bad_ones_say_why() {
        assert_eq!(parse("100ms every 1s"), Ok((Duration::from_millis(100), Duration::from_secs(1))));
        assert_eq!(parse("0.5s every 2s"), Ok((Duration::from_millis(500), Duration::from_secs(2))));
        let huge = format!("100ms every {}s", "9".repeat(400)); // past Duration's range: an error, not a panic
        for bad in ["100ms", "1s every 100ms", "0ms every 1s", "100 every 1s", "100ms every 2h", &huge] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
