//! Per-call timeouts for all of a run's callers with one timer.
//!
//! `tokio::time::timeout` inserts a timer into the wheel and removes it again on every call: a
//! visible share of the client's CPU per call (profiled at c=50 on loopback). A timer per caller,
//! armed once and moved only when it fired early, held a tokio `Sleep` per caller, a large share of
//! what an HTTP/2 stream in flight cost (bench/results/h2-stream-memory-2026-12-07.md). Every call of a run
//! has the same limit, so a call starting now has the latest deadline of all: the earliest deadline
//! only moves when calls end. One task ([`Deadlines::watch`]) sleeps until the earliest deadline
//! of the calls running, marks those past theirs as timed out and wakes them, and sleeps again
//! (a whole limit when none runs: a call starting meanwhile ends its limit after that). A caller
//! holds only when its call started, and its waker.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Poll, Waker};
use std::time::Duration;
use tokio::time::Instant;

/// A caller's call: not running, timed out, or running since this many nanoseconds after
/// [`Deadlines::origin`], plus one.
const IDLE: u64 = 0;
const EXPIRED: u64 = u64::MAX;

pub struct Deadlines {
    limit: Duration,
    origin: Instant,
    callers: Box<[Watched]>,
}

#[derive(Default)]
struct Watched {
    started: AtomicU64,
    waker: Mutex<Option<Waker>>,
}

impl Deadlines {
    /// Deadlines of `limit` for `callers` callers, numbered from 0.
    pub fn new(limit: Duration, callers: usize) -> Self {
        Deadlines { limit, origin: Instant::now(), callers: (0..callers).map(|_| Watched::default()).collect() }
    }

    /// Runs `call` for `caller`, started at `started`; None if it had not finished `limit` after
    /// that. The call comes pinned where its caller keeps it: a future taken by value would be
    /// held twice (the argument and its pinned place), and a caller's future is most of what it
    /// holds. Not an async fn, for the same reason. Needs [`Deadlines::watch`] running.
    pub fn run<'a, F: Future>(
        &'a self,
        caller: usize,
        started: Instant,
        mut call: Pin<&'a mut F>,
    ) -> impl Future<Output = Option<F::Output>> + 'a {
        let watched = &self.callers[caller];
        let since = u64::try_from(started.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX - 2);
        watched.started.store(since + 1, Ordering::Release);
        std::future::poll_fn(move |cx| {
            if let Poll::Ready(out) = call.as_mut().poll(cx) {
                watched.started.store(IDLE, Ordering::Release);
                return Poll::Ready(Some(out));
            }
            // The waker first, then the verdict: a deadline passing in between still wakes us.
            {
                let mut waker = watched.waker.lock().unwrap_or_else(|e| e.into_inner());
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
            }
            if watched.started.load(Ordering::Acquire) == EXPIRED {
                watched.started.store(IDLE, Ordering::Release);
                return Poll::Ready(None);
            }
            Poll::Pending
        })
    }

    /// Times out the calls past their deadline, as they pass it; runs until aborted. Deadlines
    /// that fall within a thousandth of the limit of each other are handled by one wake-up.
    pub async fn watch(&self) {
        loop {
            let now = Instant::now();
            let mut earliest = now + self.limit;
            for watched in self.callers.iter() {
                let started = watched.started.load(Ordering::Acquire);
                if started == IDLE || started == EXPIRED {
                    continue;
                }
                let deadline = self.origin + Duration::from_nanos(started - 1) + self.limit;
                if deadline > now {
                    earliest = earliest.min(deadline);
                    continue;
                }
                let expired = watched.started.compare_exchange(started, EXPIRED, Ordering::AcqRel, Ordering::Acquire);
                if expired.is_ok() {
                    if let Some(waker) = watched.waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
                        waker.wake();
                    }
                }
            }
            tokio::time::sleep_until(earliest.max(now + self.limit / 1024)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::sync::Arc;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn watched(limit: Duration, callers: usize) -> (Arc<Deadlines>, tokio::task::JoinHandle<()>) {
        let deadlines = Arc::new(Deadlines::new(limit, callers));
        let watcher = deadlines.clone();
        (deadlines, tokio::spawn(async move { watcher.watch().await }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_slower_than_the_limit_times_out_at_its_own_deadline() {
        let (deadlines, watch) = watched(MS(100), 1);
        // Calls inside the limit, past the first call's deadline: never timed out early.
        for _ in 0..5 {
            let out = deadlines.run(0, Instant::now(), pin!(tokio::time::sleep(MS(60)))).await;
            assert_eq!(out, Some(()));
        }
        let started = Instant::now();
        let out = deadlines.run(0, started, pin!(tokio::time::sleep(MS(500)))).await;
        assert_eq!(out, None);
        assert_eq!(started.elapsed(), MS(100));
        watch.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn the_limit_counts_from_the_given_start() {
        let (deadlines, watch) = watched(MS(100), 1);
        let started = Instant::now();
        tokio::time::sleep(MS(70)).await; // e.g. a connect before the call proper
        assert_eq!(deadlines.run(0, started, pin!(tokio::time::sleep(MS(50)))).await, None);
        assert_eq!(started.elapsed(), MS(100));
        assert_eq!(deadlines.run(0, Instant::now(), pin!(async { 7 })).await, Some(7));
        watch.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn many_callers_each_time_out_at_their_own_deadline_and_only_the_slow_ones() {
        let (deadlines, watch) = watched(MS(1000), 200);
        let start = Instant::now();
        let callers = (0..200u64).map(|i| {
            let deadlines = deadlines.clone();
            tokio::spawn(async move {
                // Caller i starts at i ms; the odd ones take 1,500 ms, the even ones 10.
                tokio::time::sleep(MS(i)).await;
                let started = Instant::now();
                let took = if i % 2 == 1 { MS(1500) } else { MS(10) };
                let out = deadlines.run(i as usize, started, pin!(tokio::time::sleep(took))).await;
                (i, out, started.elapsed())
            })
        });
        for caller in callers.collect::<Vec<_>>() {
            let (i, out, elapsed) = caller.await.unwrap();
            if i % 2 == 1 {
                assert_eq!(out, None, "caller {i}");
                // Late by at most a thousandth of the limit (one wake-up's span).
                assert!(elapsed >= MS(1000) && elapsed <= MS(1001), "caller {i}: {elapsed:?}");
            } else {
                assert_eq!(out, Some(()), "caller {i}");
                assert_eq!(elapsed, MS(10));
            }
        }
        assert!(start.elapsed() < MS(1300));
        watch.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_dropped_midway_leaves_the_next_call_its_own_deadline() {
        let (deadlines, watch) = watched(MS(100), 1);
        {
            let slow = pin!(tokio::time::sleep(MS(500)));
            let call = deadlines.run(0, Instant::now(), slow);
            // Polled until the deadline is close, then given up (a cancelled run).
            assert!(tokio::time::timeout(MS(90), call).await.is_err());
        }
        let started = Instant::now();
        let out = deadlines.run(0, started, pin!(tokio::time::sleep(MS(80)))).await;
        assert_eq!(out, Some(()), "the dropped call's deadline is not this one's");
        assert_eq!(started.elapsed(), MS(80));
        watch.abort();
    }
}
