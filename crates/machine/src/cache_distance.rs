//! How far apart the client's and the server's CPUs are: the round trip of one cache line between
//! a thread pinned to each, both spinning (no wake-up in it). A hypervisor can move two vCPUs
//! between sharing a core and not, for tens of seconds at a time, and every call that crosses
//! between them follows (bench/results/methodology-2026-11.md#the-machine-changing-speed). Taken before and after
//! each repetition, it names that cause when a run's rounds moved together.

use crate::pinning::pin_thread;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Round trips per batch, and batches (the median batch is the figure): a few milliseconds in all.
const ROUND_TRIPS: u64 = 2_000;
const BATCHES: usize = 5;
/// A round trip that takes longer than this means the other thread is not running (its CPU is
/// busy, or pinning failed): the probe gives up rather than spin.
const GIVE_UP: Duration = Duration::from_millis(20);
/// No more batches are begun after this: with the other CPU shared, a batch can take milliseconds.
const BUDGET: Duration = Duration::from_millis(50);

/// A line of its own, so that only the two threads' traffic moves it.
#[repr(align(128))]
struct Line(AtomicU64);

/// The median round trip of a cache line between `a` and `b` in ns, or None when either CPU
/// cannot be pinned or the other side did not answer in time.
pub fn round_trip_ns(a: usize, b: usize) -> Option<f64> {
    let line = Arc::new(Line(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let echo = {
        let (line, stop) = (line.clone(), stop.clone());
        std::thread::spawn(move || {
            if pin_thread(b).is_err() {
                return;
            }
            // Odd values are the timed side's; each is answered with the next even one.
            let mut answered = 0;
            while !stop.load(Ordering::Relaxed) {
                let v = line.0.load(Ordering::Acquire);
                if v % 2 == 1 && v != answered {
                    line.0.store(v + 1, Ordering::Release);
                    answered = v;
                }
                std::hint::spin_loop();
            }
        })
    };
    let timed = {
        let line = line.clone();
        std::thread::spawn(move || -> Option<f64> {
            pin_thread(a).ok()?;
            let mut batches = Vec::with_capacity(BATCHES);
            let begun = Instant::now();
            while batches.len() < BATCHES && (batches.is_empty() || begun.elapsed() < BUDGET) {
                let started = Instant::now();
                for _ in 0..ROUND_TRIPS {
                    let sent = line.0.load(Ordering::Acquire) + 1;
                    line.0.store(sent, Ordering::Release);
                    // The clock only once a wait is long: read every round trip, it would cost
                    // about as much as a near round trip
                    // (bench/results/code-notes-2026-12.md#the-clock-in-the-cache-line-probe).
                    let mut waiting_since = None;
                    let mut spins = 0u32;
                    while line.0.load(Ordering::Acquire) != sent + 1 {
                        spins = spins.wrapping_add(1);
                        if spins.is_multiple_of(1024)
                            && waiting_since.get_or_insert_with(Instant::now).elapsed() > GIVE_UP
                        {
                            return None;
                        }
                        std::hint::spin_loop();
                    }
                }
                batches.push(started.elapsed().as_secs_f64() * 1e9 / ROUND_TRIPS as f64);
            }
            batches.sort_by(f64::total_cmp);
            Some(batches[batches.len() / 2])
        })
    };
    let ns = timed.join().ok().flatten();
    stop.store(true, Ordering::Relaxed);
    let _ = echo.join();
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_line_goes_round_between_two_cpus_in_a_plausible_time() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Both threads spin: on one CPU they would take turns in time slices.
        if cpus < 2 {
            return;
        }
        // A probe gives up when another process holds CPU 1 for 20 ms (a build beside the
        // tests): a few tries, each bounded, find a moment both threads run.
        let ns =
            (0..20).find_map(|_| round_trip_ns(0, 1)).expect("two pinned threads answer each other in one of 20 tries");
        // From sibling hyperthreads (tens of ns) to another socket across a busy host (µs).
        assert!(ns > 1.0 && ns < 100_000.0, "{ns} ns");
    }

    #[test]
    fn an_unpinnable_cpu_gives_none() {
        assert_eq!(round_trip_ns(0, 100_000), None);
    }
}
