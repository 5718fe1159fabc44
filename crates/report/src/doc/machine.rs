//! The "Machine" section: how steady the machine was before the suite (the steadiness probe's
//! loop on each pinned CPU, the wake-ups between them, its warnings, the interval floor it set)
//! and what the repetitions saw (other processes' share of the pinned CPUs, steal, re-runs,
//! disturbed cells).

use super::blocks::Block;
use callbench_results::format;
use callbench_results::model::{CpuSteadiness, IdleHold, Interference, Results, Wakeup};

/// How steady the machine was: the probe before the suite, and what the repetitions saw (nothing
/// when the file records neither, as files written before the probe existed).
pub fn machine(r: &Results) -> Vec<Block> {
    let reruns: u32 = r.cells.iter().map(|c| c.reruns).sum();
    let disturbed: Vec<&str> = r.cells.iter().filter(|c| c.disturbed.is_some()).map(|c| c.id.as_str()).collect();
    let interference = interference(r);
    if r.steadiness.is_none() && interference.is_none() && reruns == 0 && disturbed.is_empty() {
        return vec![];
    }
    let mut blocks = vec![Block::Heading("Machine".into())];
    let floor =
        format!("Timing intervals are widened to at least ±{:.1}% of their median", r.suite.interval_floor * 100.0);
    let probe = r.steadiness.as_ref().map(|s| {
        format!(
            "{floor}; a fixed CPU loop probed before the suite varied by {:.1}% on the quiet pinned CPUs (a median cannot be known better than the same work varies on the same core).",
            s.loop_spread * 100.0
        )
    });
    blocks.push(Block::Paragraph(probe.unwrap_or(format!("{floor}."))));
    if let Some(s) = &r.steadiness {
        let mut lines: Vec<String> = s.cpus.iter().map(cpu).collect();
        lines.extend(s.wakeup.as_ref().map(wakeup));
        lines.extend(s.idle.as_ref().map(idle));
        blocks.push(Block::List(lines));
        if !s.warnings.is_empty() {
            blocks.push(Block::List(s.warnings.iter().map(|w| format!("Warning: {w}")).collect()));
        }
    }
    let mut seen = vec![
        "Every repetition records what else used the pinned CPUs; one where others took more than 10% of a side (or the hypervisor stole more than 5%) is measured again, and marked disturbed if it stays so.".to_string(),
    ];
    seen.extend(interference);
    seen.push(format!("{} measured again.", plural(reruns as usize, "repetition was", "repetitions were")));
    seen.push(match disturbed.len() {
        0 => "No cell kept a disturbed repetition.".into(),
        n => format!("{} a disturbed repetition: {}.", plural(n, "cell kept", "cells kept"), disturbed.join(", ")),
    });
    blocks.push(Block::Paragraph(seen.join(" ")));
    blocks
}

/// `CPU 1: a fixed loop took 812 µs a pass, varying by 3.1% (p10–p90); …`.
fn cpu(c: &CpuSteadiness) -> String {
    format!(
        "CPU {}: a fixed loop took {} a pass, varying by {:.1}% (p10–p90); {:.1}% of the CPU used by other processes while probed; governor {}",
        c.cpu,
        format::duration_us(c.loop_ns / 1000.0),
        c.spread * 100.0,
        c.busy_other * 100.0,
        c.governor.as_deref().unwrap_or("not exposed")
    )
}

/// `A wake-up round trip from CPU 0 to CPU 1 and back took 74 µs (p50; p90 103 µs), 13 µs within
/// CPU 0 …`.
fn wakeup(w: &Wakeup) -> String {
    format!(
        "A wake-up round trip from CPU {} to CPU {} and back (one byte over a Unix socket) took {} (p50; p90 {}), {} with both ends on CPU {}: one call at a time pays such a round trip per call",
        w.from,
        w.to,
        format::duration_us(w.across_p50_us),
        format::duration_us(w.across_p90_us),
        format::duration_us(w.within_p50_us),
        w.from
    )
}

/// `Idle CPUs were kept polling through the run (/dev/cpu_dma_latency held at 0; cpuidle driver
/// haltpoll)`, or why not.
fn idle(h: &IdleHold) -> String {
    let driver = h.driver.as_deref().map(|d| format!("; cpuidle driver {d}")).unwrap_or_default();
    match (h.held, h.why_not.as_deref()) {
        (true, _) => format!(
            "Idle CPUs were kept polling through the run (/dev/cpu_dma_latency held at 0{driver}): no call waited for a sleeping CPU to wake"
        ),
        (false, why) => format!(
            "Idle CPUs were free to sleep between calls ({}{driver}): one call at a time also timed how fast this machine wakes a CPU",
            why.unwrap_or("not held")
        ),
    }
}

/// What other processes took of the pinned CPUs over every measured repetition: the median and
/// the worst, per side, and the steal (None when no repetition recorded it).
fn interference(r: &Results) -> Option<String> {
    let all: Vec<_> = r.cells.iter().flat_map(|c| c.runs.iter()).filter_map(|run| run.interference).collect();
    if all.is_empty() {
        return None;
    }
    let side = |f: fn(&Interference) -> f64| {
        let values: Vec<f64> = all.iter().map(f).collect();
        let worst = values.iter().copied().fold(0.0, f64::max);
        let median = callbench_results::stats::median(&values).unwrap_or(0.0);
        format!("{:.1}% (at most {:.1}%)", median * 100.0, worst * 100.0)
    };
    Some(format!(
        "Over {}, other processes used a median {} of the client CPUs and {} of the server CPUs; the hypervisor stole {}.",
        plural(all.len(), "repetition", "repetitions"),
        side(|i| i.client_cpus_other),
        side(|i| i.server_cpus_other),
        side(|i| i.steal)
    ))
}

/// `1 cell kept`, `3 cells kept`.
fn plural(n: usize, one: &str, several: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { several })
}
