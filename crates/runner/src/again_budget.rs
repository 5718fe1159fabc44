//! How long an experiment may spend measuring repetitions again (those disturbed by others, run in
//! a slow spell, or with the CPUs placed otherwise): a share of its rounds' planned time. On a
//! quiet machine little is measured again; on a noisy one the rules could measure a cell up to
//! three times over, and the default run took far longer than its plan, mostly measuring again
//! (bench/results/default-run-time-2026-12-07.md). With the budget a run takes at most its plan
//! and this share more; what stays disturbed shows as it is (the cell's `disturbed`, `noisy`).

use std::time::Duration;

/// The share of an experiment's planned rounds it may spend measuring again.
pub const SHARE: f64 = 0.25;

pub struct AgainBudget {
    left: Duration,
    granted: Duration,
    /// Set once the budget ran out and the run said so.
    told: bool,
}

impl AgainBudget {
    /// [`SHARE`] of `planned`, the experiment's rounds (every repetition's duration and warm-up).
    pub fn of_rounds(planned: Duration) -> AgainBudget {
        let granted = planned.mul_f64(SHARE);
        AgainBudget { left: granted, granted, told: false }
    }

    /// Whether another measurement again may start.
    pub fn allows(&self) -> bool {
        !self.left.is_zero()
    }

    /// What is left of the budget (a wait for the CPUs' placement takes no longer).
    pub fn left(&self) -> Duration {
        self.left
    }

    /// Counts a measurement again that took `took`.
    pub fn spend(&mut self, took: Duration) {
        self.left = self.left.saturating_sub(took);
    }

    /// The line to print the first time a measurement again is refused, then None.
    pub fn refusal(&mut self, experiment: &str) -> Option<String> {
        if self.allows() || std::mem::replace(&mut self.told, true) {
            return None;
        }
        Some(format!(
            "{experiment}: nothing more is measured again: its {:.0} s for that ({:.0}% of its rounds' planned time) are spent",
            self.granted.as_secs_f64(),
            SHARE * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_of_the_rounds_then_one_refusal_line() {
        let mut b = AgainBudget::of_rounds(Duration::from_secs(40));
        assert!(b.allows());
        assert_eq!(b.refusal("sequential"), None);
        b.spend(Duration::from_secs(6));
        assert!(b.allows());
        b.spend(Duration::from_secs(6));
        assert!(!b.allows());
        let line = b.refusal("sequential").unwrap();
        assert!(line.starts_with("sequential: nothing more is measured again: its 10 s"), "{line}");
        assert_eq!(b.refusal("sequential"), None);
    }

    #[test]
    fn nothing_planned_allows_nothing() {
        let mut b = AgainBudget::of_rounds(Duration::ZERO);
        assert!(!b.allows());
        assert!(b.refusal("x").is_some());
    }
}
