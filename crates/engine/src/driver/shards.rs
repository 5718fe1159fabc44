//! One sink per runtime thread, shared by every worker that runs there: what a run holds for its
//! records grows with the threads, not with the callers (`-c 10000` would otherwise hold ten thousand
//! sets of histograms). A worker locks the sink of the thread it runs on for one `add`; no other
//! thread uses that sink while the run's threads are as many as its sinks, so the lock is uncontended.

use crate::record::CallRecord;
use crate::sink::Sink;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs are told apart in the threads' memory by a number of their own.
static RUNS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The run this thread last recorded for, and its sink's index in that run.
    static SHARD: Cell<(u64, usize)> = const { Cell::new((0, 0)) };
}

pub(super) struct Shards<S> {
    run: u64,
    sinks: Vec<Mutex<S>>,
    /// The next index a thread new to this run takes (wrapping over `sinks`).
    next: AtomicUsize,
}

impl<S: Sink> Shards<S> {
    /// `count` sinks (at least one), each from `new_sink`.
    pub(super) fn new(count: usize, new_sink: impl Fn() -> S) -> Self {
        let sinks = (0..count.max(1)).map(|_| Mutex::new(new_sink())).collect();
        Shards { run: RUNS.fetch_add(1, Ordering::Relaxed), sinks, next: AtomicUsize::new(0) }
    }

    /// Records into the sink of the calling thread.
    pub(super) fn add(&self, record: &CallRecord) {
        let index = SHARD.with(|shard| match shard.get() {
            (run, index) if run == self.run => index,
            _ => {
                let index = self.next.fetch_add(1, Ordering::Relaxed) % self.sinks.len();
                shard.set((self.run, index));
                index
            }
        });
        // A worker never panics while holding it, so a poisoned lock still holds whole records.
        let mut sink = self.sinks[index].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sink.add(record);
    }

    /// Every thread's records in one sink.
    pub(super) fn merged(self) -> S {
        let mut sinks = self.sinks.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()));
        let mut all = sinks.next().expect("at least one sink");
        for sink in sinks {
            all.merge(sink);
        }
        all
    }
}

/// How many sinks a run on the current runtime needs: one per worker thread, never more than callers.
pub(super) fn per_thread(concurrency: usize) -> usize {
    let threads = tokio::runtime::Handle::try_current().map_or(1, |h| h.metrics().num_workers());
    threads.clamp(1, concurrency.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ByteCounts, Outcome};
    use std::sync::Arc;
    use std::time::Duration;

    fn record(seq: u64) -> CallRecord {
        let d = Duration::from_micros(seq);
        CallRecord {
            seq,
            intended: d,
            start: d,
            end: d,
            connect: None,
            outcome: Outcome::Ok,
            bytes: ByteCounts::default(),
            stream: None,
        }
    }

    #[test]
    fn every_record_of_every_thread_is_merged_once() {
        let shards = Arc::new(Shards::new(2, Vec::new));
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let shards = shards.clone();
                scope.spawn(move || (0..1000).for_each(|i| shards.add(&record(t * 1000 + i))));
            }
        });
        let mut all = Arc::into_inner(shards).unwrap().merged();
        all.sort_by_key(|r| r.seq);
        assert_eq!(all.iter().map(|r| r.seq).collect::<Vec<_>>(), (0..4000).collect::<Vec<_>>());
    }

    #[test]
    fn a_thread_keeps_its_sink_within_a_run_and_takes_a_new_one_in_the_next() {
        let lens =
            |shards: &Shards<Vec<CallRecord>>| shards.sinks.iter().map(|s| s.lock().unwrap().len()).collect::<Vec<_>>();
        let first = Shards::new(3, Vec::new);
        std::thread::scope(|scope| {
            scope.spawn(|| first.add(&record(0)));
        });
        (1..6).for_each(|i| first.add(&record(i)));
        assert_eq!(lens(&first), [1, 5, 0]);
        let second = Shards::new(3, Vec::new);
        second.add(&record(0));
        assert_eq!(lens(&second), [1, 0, 0], "the index this thread had in the first run is not kept");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn one_sink_per_worker_thread_and_no_more_than_callers() {
        assert_eq!(per_thread(100), 3);
        assert_eq!(per_thread(2), 2);
        assert_eq!(per_thread(0), 1);
    }
}
