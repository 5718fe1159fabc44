//! The run's one monotonic clock: offsets from the run's start.
//!
//! It reads tokio's clock, so tests that run on a paused runtime (`#[tokio::test(start_paused = true)]`)
//! drive the schedulers with virtual time: sleeps complete instantly and in order, exactly.

use std::time::Duration;
use tokio::time::Instant;

/// Tokio's timer rounds up to its 1 ms tick and may fire a little later still; a precise clock
/// sleeps to this much before the time and covers the rest by spinning.
const TIMER_SLACK: Duration = Duration::from_millis(2);

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    t0: Instant,
    precise: bool,
}

impl Clock {
    /// A clock whose zero is now; its sleeps may end up to about 1 ms late (tokio's timer wheel).
    pub fn start() -> Self {
        Clock { t0: Instant::now(), precise: false }
    }

    /// A clock whose sleeps end within microseconds: it sleeps to 2 ms before the time, then yields
    /// to the runtime in a loop (other tasks run; the thread stays busy). Not for paused test time,
    /// which never advances while a task spins.
    pub fn start_precise() -> Self {
        Clock { t0: Instant::now(), precise: true }
    }

    /// Time since the run's start.
    pub fn now(&self) -> Duration {
        self.t0.elapsed()
    }

    /// The instant `at` after the run's start.
    pub fn instant(&self, at: Duration) -> Instant {
        self.t0 + at
    }

    /// Waits until `at` after the run's start (returns at once if that is past).
    pub async fn sleep_until(&self, at: Duration) {
        let now = self.now();
        if at <= now {
            return;
        }
        if !self.precise {
            return tokio::time::sleep_until(self.t0 + at).await;
        }
        if at - now > TIMER_SLACK {
            tokio::time::sleep_until(self.t0 + at - TIMER_SLACK).await;
        }
        while self.now() < at {
            tokio::task::yield_now().await;
        }
    }
}

/// CLOCK_MONOTONIC in seconds: the clock `std::time::Instant` reads and Python's `time.monotonic()`
/// gives, so times can cross between processes of one machine (a coordinator's start time).
pub fn monotonic_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the struct given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn precise_sleeps_end_within_microseconds() {
        // The median of 21 sleeps; the coarse timer is ~1 ms late every time. A thread that other
        // processes keep off its core is late too, whatever the clock does: up to five tries, one of
        // which must be precise (a coarse clock never is).
        let mut tries = Vec::new();
        for _ in 0..5 {
            let clock = Clock::start_precise();
            let mut late = Vec::new();
            for i in 1..=21u64 {
                let at = Duration::from_micros(2_300 * i);
                clock.sleep_until(at).await;
                late.push(clock.now() - at);
            }
            late.sort();
            tries.push(late[10]);
            if late[10] < Duration::from_micros(100) {
                return;
            }
        }
        panic!("no try had a median under 100 µs late: {tries:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn sleeps_to_an_offset_in_virtual_time() {
        let clock = Clock::start();
        clock.sleep_until(Duration::from_millis(250)).await;
        assert_eq!(clock.now(), Duration::from_millis(250));
        clock.sleep_until(Duration::from_millis(100)).await; // past: no wait
        assert_eq!(clock.now(), Duration::from_millis(250));
    }
}
