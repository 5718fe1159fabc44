//! When a run stops, and which of its calls are warm-up.

use std::time::Duration;

/// A run stops after `calls` measured calls and/or `duration` of measurement, whichever comes first,
/// after a `warmup` whose calls are made but excluded from the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stop {
    pub calls: Option<u64>,
    pub duration: Option<Duration>,
    pub warmup: Duration,
}

impl Stop {
    pub fn after_calls(calls: u64) -> Self {
        Stop { calls: Some(calls), ..Stop::default() }
    }

    pub fn after(duration: Duration) -> Self {
        Stop { duration: Some(duration), ..Stop::default() }
    }

    pub fn with_warmup(self, warmup: Duration) -> Self {
        Stop { warmup, ..self }
    }

    /// Every run must be bounded: by count, by duration, or by a pacer whose schedule ends.
    pub fn is_bounded(&self) -> bool {
        self.calls.is_some() || self.duration.is_some()
    }

    /// The offset at which measurement ends, if bounded by duration.
    pub fn deadline(&self) -> Option<Duration> {
        self.duration.map(|d| self.warmup + d)
    }

    /// Whether a call starting (or intended to start) at `at` belongs to the warm-up.
    pub fn in_warmup(&self, at: Duration) -> bool {
        at < self.warmup
    }
}

/// Counts admitted calls against a `Stop`.
#[derive(Debug, Clone)]
pub struct Admission {
    stop: Stop,
    measured: u64,
}

impl Admission {
    pub fn new(stop: Stop) -> Self {
        Admission { stop, measured: 0 }
    }

    /// Whether the run has made all the measured calls its count allows.
    pub fn count_reached(&self) -> bool {
        self.stop.calls.is_some_and(|n| self.measured >= n)
    }

    /// Whether a call starting at `at` may be made; once this says no, the run is over.
    pub fn admit(&mut self, at: Duration) -> bool {
        if self.stop.deadline().is_some_and(|end| at >= end) {
            return false;
        }
        if self.stop.in_warmup(at) {
            return true;
        }
        if self.stop.calls.is_some_and(|n| self.measured >= n) {
            return false;
        }
        self.measured += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn count_limit_excludes_warmup_calls() {
        let mut a = Admission::new(Stop::after_calls(2).with_warmup(MS(100)));
        assert!(a.admit(MS(0)) && a.admit(MS(50)) && a.admit(MS(99)));
        assert!(a.admit(MS(100)) && a.admit(MS(150)));
        assert!(!a.admit(MS(160)));
    }

    #[test]
    fn duration_counts_after_warmup() {
        let stop = Stop::after(MS(500)).with_warmup(MS(200));
        assert_eq!(stop.deadline(), Some(MS(700)));
        let mut a = Admission::new(stop);
        assert!(a.admit(MS(699)));
        assert!(!a.admit(MS(700)));
        assert!(stop.in_warmup(MS(199)) && !stop.in_warmup(MS(200)));
    }

    #[test]
    fn first_limit_wins() {
        let mut a = Admission::new(Stop { calls: Some(1), duration: Some(MS(10)), warmup: MS(0) });
        assert!(a.admit(MS(0)));
        assert!(!a.admit(MS(1)));
        assert!(!Stop::default().is_bounded());
    }
}
