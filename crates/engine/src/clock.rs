//! The run's one monotonic clock: offsets from the run's start.
//!
//! It reads tokio's clock, so tests that run on a paused runtime (`#[tokio::test(start_paused = true)]`)
//! drive the schedulers with virtual time: sleeps complete instantly and in order, exactly.

use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    t0: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock { t0: Instant::now() }
    }

    /// Time since the run's start.
    pub fn now(&self) -> Duration {
        self.t0.elapsed()
    }

    /// Waits until `at` after the run's start (returns at once if that is past).
    /// Tokio's timer has a 1 ms resolution, so a start may be up to about 1 ms late.
    pub async fn sleep_until(&self, at: Duration) {
        if at > self.now() {
            tokio::time::sleep_until(self.t0 + at).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn sleeps_to_an_offset_in_virtual_time() {
        let clock = Clock::start();
        clock.sleep_until(Duration::from_millis(250)).await;
        assert_eq!(clock.now(), Duration::from_millis(250));
        clock.sleep_until(Duration::from_millis(100)).await; // past: no wait
        assert_eq!(clock.now(), Duration::from_millis(250));
    }
}
