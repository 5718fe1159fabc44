//! Processing experiments (seed 000's first question): the auth work — read users.json, parse it,
//! find the user, SHA-512 — as a program in each language, timed warm (many iterations in one
//! process, after untimed warm-up ones) and cold (a whole process for one call, seen from outside).
//! One repetition is one process; its figures fill the same `RunMetrics` as a load run:
//! `wall_us_per_call` is the mean time of an iteration (warm) or the process's wall time (cold).

use super::outcome::Measured;
use crate::plan::CellPlan;
use callbench_launcher::program::{ProgramManifest, RunArgs};
use callbench_launcher::repo::Repo;
use callbench_results::model::{Latency, RunMetrics};
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// `warm` or `cold`.
pub fn start_of(p: &CellPlan) -> &str {
    p.fields.start.as_deref().unwrap_or("warm")
}

/// The arguments of one repetition of `p`.
pub(crate) fn run_args(repo: &Repo, p: &CellPlan) -> Result<RunArgs, String> {
    let cold = start_of(p) == "cold";
    Ok(RunArgs {
        users: repo.users_file().map_err(|e| format!("{e:#}"))?,
        id: p.fields.user_id.unwrap_or(9999),
        password: p.fields.password.clone().unwrap_or_else(|| "callbench".into()),
        iterations: if cold { 1 } else { p.fields.iterations.unwrap_or(50).max(1) },
        warmup: if cold { 0 } else { p.fields.warmup_iterations.unwrap_or(20) },
    })
}

/// One process of `program` for the cell `p`, pinned to `cpus`; the hash it prints is checked.
pub(crate) async fn measure(
    repo: &Repo,
    program: &ProgramManifest,
    p: &CellPlan,
    cpus: &[usize],
    cancel: Arc<AtomicBool>,
) -> Result<Measured, String> {
    let args = run_args(repo, p)?;
    let expected = callbench_workloads::auth::sha512_hex(&args.password);
    let (repo, program, cpus, args2, cancel2) =
        (repo.clone(), program.clone(), cpus.to_vec(), args.clone(), cancel.clone());
    let run = tokio::task::spawn_blocking(move || program.run_once(&repo, &args2, &cpus, &cancel2))
        .await
        .map_err(|e| format!("the run of the program panicked: {e}"))?;
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(Measured {
            metrics: RunMetrics::default(),
            histogram: Histogram::new(3).expect("valid"),
            window: Duration::ZERO,
            cancelled: true,
        });
    }
    let run = run.map_err(|e| format!("{e:#}"))?;
    if run.hash != expected {
        return Err(format!(
            "{} printed hash {} for password '{}', expected {expected}",
            p.server.name, run.hash, args.password
        ));
    }
    Ok(metrics_of(&run, start_of(p) == "cold"))
}

fn metrics_of(run: &callbench_launcher::program::ProgramRun, cold: bool) -> Measured {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds");
    for &ns in &run.iteration_ns {
        let _ = histogram.record((ns / 1000).max(1));
    }
    let n = run.iteration_ns.len() as u64;
    let work: Duration = run.iteration_ns.iter().map(|&ns| Duration::from_nanos(ns)).sum();
    // Warm: the timed iterations; cold: the whole process, start-up included.
    let window = if cold { run.wall } else { work };
    let secs = window.as_secs_f64().max(1e-9);
    let latency = Latency {
        p50: histogram.value_at_quantile(0.5) as f64,
        p90: histogram.value_at_quantile(0.9) as f64,
        p99: histogram.value_at_quantile(0.99) as f64,
        p99_9: histogram.value_at_quantile(0.999) as f64,
        max: histogram.max() as f64,
        mean: work.as_secs_f64() * 1e6 / n.max(1) as f64,
    };
    let metrics = RunMetrics {
        calls_ok: n,
        duration_s: secs,
        throughput_per_s: n as f64 / secs,
        latency_us: Some(latency),
        // The process's own CPU: per call only when the process did nothing else (cold).
        server_cpu_us_per_call: cold.then_some(run.cpu.as_secs_f64() * 1e6),
        server_cpu_cores: Some(run.cpu.as_secs_f64() / run.wall.as_secs_f64().max(1e-9)),
        server_rss_peak_kib: Some(run.max_rss_kib),
        ..RunMetrics::default()
    };
    Measured { metrics, histogram, window, cancelled: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_launcher::program::ProgramRun;

    fn run(ns: &[u64], wall_ms: u64) -> ProgramRun {
        ProgramRun {
            hash: "h".into(),
            iteration_ns: ns.to_vec(),
            wall: Duration::from_millis(wall_ms),
            cpu: Duration::from_millis(wall_ms / 2),
            max_rss_kib: 1000,
        }
    }

    #[test]
    fn warm_is_the_mean_iteration_and_cold_the_whole_process() {
        let warm = metrics_of(&run(&[2_000_000, 4_000_000], 500), false).metrics;
        assert_eq!(warm.metric("wall_us_per_call"), Some(3000.0));
        assert_eq!(warm.latency_us.unwrap().mean, 3000.0);
        assert_eq!(warm.server_cpu_us_per_call, None);
        let cold = metrics_of(&run(&[2_000_000], 80), true).metrics;
        assert_eq!(cold.metric("wall_us_per_call"), Some(80_000.0));
        assert_eq!(cold.latency_us.unwrap().p50, 2000.0);
        assert_eq!(cold.server_cpu_us_per_call, Some(40_000.0));
    }
}
