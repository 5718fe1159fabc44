//! Before a suite: what on this machine would make its timings unstable (in the spirit of pyperf's
//! `system show`), and how unstable a fixed CPU loop is on each pinned CPU right now. The loop's
//! spread is the share every timing interval is widened to at least: a cell's median cannot be
//! known better than the same work varies on the same core.

use crate::interference::{self, OTHER_LIMIT, STEAL_LIMIT};
use crate::pinning::pin_thread;
use crate::sysfs::read_trimmed;
use callbench_results::model::{CpuSteadiness, IdleHold, Steadiness};
use std::time::{Duration, Instant};

/// Passes of the fixed loop per CPU (after two unmeasured ones), and its size: milliseconds a
/// pass, long against the clock. More passes are made until the window is long enough for
/// /proc/stat to tell others' share ([`interference::MIN_WINDOW_TICKS`], with half again as margin):
/// forty short passes can read a busy CPU as idle (bench/results/methodology-2026-11.md#the-steadiness-probes-length).
/// At most `MAX_PASSES`, so the probe stays bounded.
const PASSES: usize = 40;
const MAX_PASSES: usize = 400;
const LOOP_ITERATIONS: u64 = 2_000_000;
/// A loop varying more than this much is worth a warning of its own.
const SPREAD_WARNING: f64 = 0.05;

/// Probes every CPU of `client` and `server` in turn (about 0.3 s each), then the wake-ups
/// between the first of each (about 1 s).
pub fn probe(client: &[usize], server: &[usize]) -> Steadiness {
    let mut cpus: Vec<usize> = client.iter().chain(server).copied().collect();
    cpus.sort_unstable();
    cpus.dedup();
    let before = interference::snapshot(&[]);
    let probed: Vec<CpuSteadiness> = cpus.iter().filter_map(|&cpu| probe_cpu(cpu)).collect();
    let after = interference::snapshot(&[]);
    let mut warnings = Vec::new();
    for c in &probed {
        if c.busy_other > OTHER_LIMIT {
            warnings.push(format!(
                "CPU {} was {:.0}% busy with other processes while probed: its cells may be disturbed",
                c.cpu,
                c.busy_other * 100.0
            ));
        }
        if c.spread > SPREAD_WARNING {
            warnings.push(format!(
                "a fixed loop's time varies by {:.1}% on CPU {} (p10–p90): timings there are unsteady",
                c.spread * 100.0,
                c.cpu
            ));
        }
        if let Some(g) = c.governor.as_deref().filter(|g| *g != "performance") {
            warnings.push(format!("CPU {} uses the '{g}' frequency governor, not 'performance'", c.cpu));
        }
    }
    let sides = interference::Sides { client: &cpus, server: &[] };
    if let Some(i) = interference::between(&before, &after, &sides, 1).filter(|i| i.steal > STEAL_LIMIT) {
        warnings.push(format!("the hypervisor stole {:.0}% of the pinned CPUs' time while probed", i.steal * 100.0));
    }
    warnings.extend(turbo_warning());
    let wakeup = client.first().zip(server.first()).and_then(|(&from, &to)| crate::wakeup::probe(from, to));
    warnings.extend(wakeup.as_ref().and_then(crate::wakeup::warning));
    // A CPU busy with others while probed measures them, not the machine's steadiness: its
    // repetitions are judged one by one (`disturbed`) instead of widening every interval.
    let quiet: Vec<&CpuSteadiness> = probed.iter().filter(|c| c.busy_other <= OTHER_LIMIT).collect();
    // No quiet CPU: the loop timed the neighbours, not the machine
    // (bench/results/code-notes-2026-12.md#the-fixed-loop-on-a-busy-cpu), so it sets no floor.
    let loop_spread = if quiet.is_empty() { 0.0 } else { quiet.iter().map(|c| c.spread).fold(0.0, f64::max) };
    Steadiness { warnings, cpus: probed, loop_spread, wakeup, idle: None }
}

/// [`probe`] as a run records it: taken with idle CPUs kept awake or not (`idle`, from
/// [`crate::idle_hold::take`], held before so that the wake-up round trip is what the cells will
/// meet), its warning among the others.
pub fn probe_with(client: &[usize], server: &[usize], idle: IdleHold) -> Steadiness {
    let mut steadiness = probe(client, server);
    steadiness.warnings.extend(crate::idle_hold::warning(&idle));
    steadiness.idle = Some(idle);
    steadiness
}

/// The fixed loop on one CPU, from a thread pinned there.
fn probe_cpu(cpu: usize) -> Option<CpuSteadiness> {
    std::thread::spawn(move || {
        pin_thread(cpu).ok()?;
        for _ in 0..2 {
            fixed_loop();
        }
        let a = interference::snapshot(&[]);
        let mut times = timed_passes(window_needed());
        let b = interference::snapshot(&[]);
        times.sort_by(|x, y| x.total_cmp(y));
        let at = |q: f64| callbench_results::stats::nearest_rank(&times, q);
        let median = at(0.5);
        let sides = interference::Sides { client: &[cpu], server: &[] };
        // `between` takes this whole process's CPU time off: here that is this thread's (the
        // others wait), so what is left on the CPU is other processes'.
        let busy_other = interference::between(&a, &b, &sides, 1).map(|i| i.client_cpus_other).unwrap_or(0.0);
        Some(CpuSteadiness {
            cpu,
            loop_ns: median,
            spread: if median > 0.0 { (at(0.9) - at(0.1)) / median } else { 0.0 },
            busy_other,
            governor: read_trimmed(&format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")),
        })
    })
    .join()
    .ok()
    .flatten()
}

/// The shortest probe window whose share of other processes /proc/stat tells, with a margin.
fn window_needed() -> Duration {
    interference::shortest_window() * 3 / 2
}

/// Each pass's time (ns): [`PASSES`] at least, and more until they last `window` ([`MAX_PASSES`]
/// at most).
fn timed_passes(window: Duration) -> Vec<f64> {
    let start = Instant::now();
    let mut times = Vec::with_capacity(PASSES);
    while times.len() < PASSES || (start.elapsed() < window && times.len() < MAX_PASSES) {
        let t = Instant::now();
        fixed_loop();
        times.push(t.elapsed().as_nanos() as f64);
    }
    times
}

/// A dependent chain of multiply-adds the compiler cannot shorten.
fn fixed_loop() -> u64 {
    let mut x = std::hint::black_box(0x9e37_79b9_7f4a_7c15u64);
    for i in 0..LOOP_ITERATIONS {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    std::hint::black_box(x)
}

fn turbo_warning() -> Option<String> {
    let intel = read_trimmed("/sys/devices/system/cpu/intel_pstate/no_turbo").is_some_and(|v| v == "0");
    let boost = read_trimmed("/sys/devices/system/cpu/cpufreq/boost").is_some_and(|v| v == "1");
    (intel || boost).then(|| "turbo boost is on: the clock follows load and temperature".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_each_pinned_cpu_once() {
        let s = probe(&[0], &[0]);
        assert_eq!(s.cpus.len(), 1);
        let c = &s.cpus[0];
        assert_eq!(c.cpu, 0);
        assert!(c.loop_ns > 0.0 && c.spread >= 0.0 && (0.0..=1.0).contains(&c.busy_other), "{c:?}");
        assert!(s.loop_spread <= c.spread, "{s:?}");
    }

    #[test]
    fn passes_last_the_window_proc_stat_needs_or_stop_at_their_bound() {
        let started = Instant::now();
        let times = timed_passes(window_needed());
        assert!(times.len() >= PASSES && times.len() <= MAX_PASSES, "{}", times.len());
        assert!(started.elapsed() >= window_needed() || times.len() == MAX_PASSES, "{:?}", started.elapsed());
        assert!(window_needed() > Duration::from_nanos(1_000_000_000 / crate::process_group::ticks_per_second()) * 20);
    }

    #[test]
    fn a_cpu_that_does_not_exist_is_left_out() {
        assert!(probe_cpu(1 << 20).is_none());
    }
}
