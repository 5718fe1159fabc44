//! How long the pinned CPUs take to wake each other: one byte over a Unix socket to a thread on
//! the server's CPU and back, against the same round trip with both ends on the client's CPU.
//! One call at a time pays such a round trip per call, and on a VM its cost follows the host's
//! load, which steal time does not show (bench/results/methodology-2026-11.md#the-wake-up-round-trip), so the
//! report states it beside the loop.

use crate::pinning::pin_thread;
use callbench_results::model::Wakeup;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Round trips timed after the unmeasured ones (fewer when they take longer than `BUDGET`, but
/// never under `MIN_ROUND_TRIPS`), and the time each pair of ends is given.
const ROUND_TRIPS: usize = 2_000;
const MIN_ROUND_TRIPS: usize = 20;
const WARMUP: usize = 200;
const BUDGET: Duration = Duration::from_millis(400);
/// Across CPUs more than this many times the round trip within one: calls that wait for the
/// other side measure the machine's wake-ups. A judgment, not calibrated on a quiet hour (none
/// came while this was written): both round trips are two context switches, and across CPUs
/// adds waking an idle CPU, a few µs on bare metal, tens when the hypervisor delays the IPI.
const SLOW_FACTOR: f64 = 3.0;

/// The round trip from `from` to `to` and back, and within `from` alone (None when either CPU
/// cannot be pinned or a socket fails).
pub fn probe(from: usize, to: usize) -> Option<Wakeup> {
    let (across_p50_us, across_p90_us) = round_trips(from, to)?;
    let (within_p50_us, _) = round_trips(from, from)?;
    Some(Wakeup { from, to, across_p50_us, across_p90_us, within_p50_us })
}

/// A sentence when the round trip across CPUs costs several times the one within a CPU.
pub fn warning(w: &Wakeup) -> Option<String> {
    (w.from != w.to && w.across_p50_us > SLOW_FACTOR * w.within_p50_us).then(|| {
        format!(
            "a wake-up round trip between CPU {} and CPU {} takes {:.0} µs (p50), {:.1}× the {:.0} µs within CPU {}: one call at a time measures this machine's wake-ups",
            w.from,
            w.to,
            w.across_p50_us,
            w.across_p50_us / w.within_p50_us,
            w.within_p50_us,
            w.from
        )
    })
}

/// p50 and p90 of the round trip, in µs, with the caller's end pinned to `from` and the echoing
/// end to `to`.
fn round_trips(from: usize, to: usize) -> Option<(f64, f64)> {
    let (mut near, mut far) = UnixStream::pair().ok()?;
    // Neither end waits forever if the other cannot run or pin.
    for s in [&near, &far] {
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    }
    let echo = std::thread::spawn(move || -> Option<()> {
        pin_thread(to).ok()?;
        let mut byte = [0u8; 1];
        while far.read(&mut byte).ok()? == 1 {
            far.write_all(&byte).ok()?;
        }
        Some(())
    });
    let timed = std::thread::spawn(move || -> Option<Vec<f64>> {
        pin_thread(from).ok()?;
        let mut times = Vec::with_capacity(ROUND_TRIPS);
        let mut byte = [7u8; 1];
        let mut trip = || -> Option<()> {
            near.write_all(&byte).ok()?;
            near.read_exact(&mut byte).ok()
        };
        let warm_until = Instant::now() + BUDGET / 4;
        for _ in 0..WARMUP {
            trip()?;
            if Instant::now() > warm_until {
                break;
            }
        }
        // Bounded in time as well as in count: a busy CPU may take milliseconds a round trip.
        let deadline = Instant::now() + BUDGET;
        while times.len() < ROUND_TRIPS && (Instant::now() < deadline || times.len() < MIN_ROUND_TRIPS) {
            let t = Instant::now();
            trip()?;
            times.push(t.elapsed().as_nanos() as f64 / 1000.0);
        }
        Some(times)
    });
    // Dropping the caller's end (when `timed` ends) ends the echo's loop.
    let times = timed.join().ok().flatten();
    let _ = echo.join();
    let mut times = times?;
    times.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| callbench_results::stats::nearest_rank(&times, q);
    Some((at(0.5), at(0.9)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_both_round_trips_on_cpu_zero() {
        let w = probe(0, 0).expect("CPU 0 exists");
        assert!(w.across_p50_us > 0.0 && w.across_p90_us >= w.across_p50_us && w.within_p50_us > 0.0, "{w:?}");
        assert!(warning(&w).is_none(), "one CPU has no across");
    }

    #[test]
    fn a_cpu_that_does_not_exist_gives_no_figure() {
        assert!(probe(0, 1 << 20).is_none());
    }

    #[test]
    fn the_warning_gives_both_figures_and_the_factor() {
        let w = Wakeup { from: 0, to: 1, across_p50_us: 74.0, across_p90_us: 103.0, within_p50_us: 13.0 };
        let text = warning(&w).unwrap();
        assert!(text.contains("between CPU 0 and CPU 1 takes 74 µs (p50), 5.7× the 13 µs within CPU 0"), "{text}");
        assert!(warning(&Wakeup { across_p50_us: 30.0, ..w }).is_none());
    }
}
