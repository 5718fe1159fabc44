//! One repetition of a Python cell: the caller is Python, through one of five mechanisms —
//! `pyo3` (the Rust workload in-process through the bindings), `python` (the same workload in
//! pure Python), `requests+SERVER` and `httpx+SERVER` (REST/JSON) or `grpcio+SERVER` — one run of
//! `python -m callbench.boundary.cell` pinned to the client CPUs, which prints its metrics in the
//! results.json shape (see python/callbench/boundary/cell.py).

use super::outcome::Measured;
use crate::mechanism::{default_calls, Mechanism};
use crate::plan::CellPlan;
use callbench_launcher::repo::Repo;
use callbench_results::model::RunMetrics;
use hdrhistogram::Histogram;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize)]
struct CellOutput {
    metrics: RunMetrics,
    #[serde(default)]
    samples_us: Vec<f64>,
}

/// Where the cell's caller goes: the server's address and pid (over the wire only).
pub struct Wire {
    pub addr: SocketAddr,
    pub pid: i32,
}

/// One repetition of the Python cell `p` through `mechanism`, pinned to `cpus`.
pub(crate) async fn measure(
    repo: &Repo,
    python: &Path,
    p: &CellPlan,
    mechanism: &Mechanism,
    wire: Option<Wire>,
    cpus: &[usize],
    cancel: Arc<AtomicBool>,
) -> Result<Measured, String> {
    let ntimes = p.fields.ntimes.unwrap_or(1);
    let calls = p.fields.calls.unwrap_or_else(|| default_calls(&p.workload, ntimes, mechanism.transport()));
    let mut command = Command::new(python);
    command.current_dir(&repo.root).args(["-m", "callbench.boundary.cell"]).args([
        "--mechanism",
        &mechanism.client,
        "--workload",
        &p.workload,
        "--ntimes",
        &ntimes.to_string(),
        "--calls",
        &calls.to_string(),
    ]);
    if let Some(w) = &p.fields.warmup_iterations {
        command.args(["--warmup-calls", &w.to_string()]);
    }
    match &wire {
        Some(w) => command.args(["--address", &w.addr.to_string(), "--server-pid", &w.pid.to_string()]),
        None => command.args(["--users", &repo.users_file().map_err(|e| format!("{e:#}"))?.display().to_string()]),
    };
    let cpus = cpus.to_vec();
    let flag = cancel.clone();
    let done = tokio::task::spawn_blocking(move || callbench_launcher::child::run_pinned(command, &cpus, &flag))
        .await
        .map_err(|e| format!("the Python caller's run panicked: {e}"))?
        .map_err(|e| format!("{e:#}"))?;
    if done.cancelled {
        return Ok(Measured {
            metrics: RunMetrics::default(),
            histogram: Histogram::new(3).expect("valid"),
            window: Duration::ZERO,
            cancelled: true,
        });
    }
    if !done.succeeded() {
        return Err(format!("the Python caller failed ({})", done.failure()));
    }
    let out: CellOutput = serde_json::from_str(done.stdout.trim())
        .map_err(|e| format!("the Python caller printed an unexpected answer ({e})"))?;
    Ok(measured(out))
}

fn measured(out: CellOutput) -> Measured {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds");
    for &us in &out.samples_us {
        let _ = histogram.record(us.round().max(1.0) as u64);
    }
    let window = Duration::from_secs_f64(out.metrics.duration_s.max(0.0));
    Measured { metrics: out.metrics, histogram, window, cancelled: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_becomes_a_repetition() {
        let metrics = RunMetrics { calls_ok: 3, duration_s: 0.5, throughput_per_s: 6.0, ..RunMetrics::default() };
        let text = format!(
            r#"{{"metrics": {}, "samples_us": [100.4, 250.0, 0.2]}}"#,
            serde_json::to_string(&metrics).unwrap()
        );
        let m = measured(serde_json::from_str(&text).unwrap());
        assert_eq!((m.metrics.calls_ok, m.histogram.len(), m.histogram.max()), (3, 3, 250));
        assert_eq!(m.window, Duration::from_millis(500));
    }
}
