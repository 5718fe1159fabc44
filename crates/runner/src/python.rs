//! Python experiments (`kind = "python"`, seed 004): the caller is Python, through one of five
//! mechanisms — `pyo3` (the Rust workload in-process through the bindings), `python` (the same
//! workload in pure Python), `requests+SERVER` and `httpx+SERVER` (REST/JSON) or `grpcio+SERVER`.
//! The runner starts, pins and verifies the servers as for any experiment; each repetition is one
//! run of `python -m callbench.boundary.cell` pinned to the client CPUs, which prints its metrics
//! in the results.json shape (see python/callbench/boundary/cell.py).

use crate::mechanism::{default_calls, Mechanism};
use crate::plan::CellPlan;
use crate::repetition::Measured;
use callbench_report::model::RunMetrics;
use callbench_servers::repo::Repo;
use hdrhistogram::Histogram;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The Python that runs the callers: `$CALLBENCH_PYTHON`, else the checkout's venv
/// (`target/python-venv`, made by `scripts/test-python` or by `callbench run`), else `python3`.
pub fn interpreter(repo: &Repo) -> PathBuf {
    if let Some(p) = std::env::var_os("CALLBENCH_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = venv_python(repo);
    if venv.is_file() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

fn venv_python(repo: &Repo) -> PathBuf {
    repo.target_dir().join("python-venv/bin/python")
}

fn importable(python: &Path) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-c", "import callbench._native, requests, httpx, grpc"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("import failed").trim().to_string())
}

/// A Python with the callbench package: found, or (when `build`) installed into the checkout's venv
/// with `pip install ./python`, as a server's build command would build it.
pub fn prepare(repo: &Repo, build: bool) -> Result<PathBuf, String> {
    let python = interpreter(repo);
    let problem = match importable(&python) {
        Ok(()) => return Ok(python),
        Err(problem) => problem,
    };
    if !build || std::env::var_os("CALLBENCH_PYTHON").is_some() {
        return Err(format!(
            "Python experiments need the callbench package in {} ({problem}): run `pip install ./python` there, \
             set CALLBENCH_PYTHON to a Python that has it, or run without --no-build",
            python.display()
        ));
    }
    let venv = venv_python(repo);
    let steps: [(&str, Vec<String>); 2] = [
        ("python3", vec!["-m".into(), "venv".into(), repo.target_dir().join("python-venv").display().to_string()]),
        (
            venv.to_str().unwrap_or_default(),
            ["-m", "pip", "install", "-q", "--disable-pip-version-check", "./python"].map(String::from).to_vec(),
        ),
    ];
    for (program, args) in steps.iter().skip(usize::from(venv.is_file())) {
        eprintln!("callbench: installing the Python package: {program} {}", args.join(" "));
        let status = Command::new(program)
            .args(args)
            .current_dir(&repo.root)
            .status()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !status.success() {
            return Err(format!("installing the Python package failed ({status}): {program} {}", args.join(" ")));
        }
    }
    importable(&venv).map_err(|p| format!("the Python package was installed but does not import: {p}"))?;
    Ok(venv)
}

/// The Python's version and path, and those of the libraries the callers use.
pub fn versions(python: &Path) -> BTreeMap<String, String> {
    const SCRIPT: &str = "import json, platform, sys\nfrom importlib import metadata\nfrom callbench import _native\n\
        v = {'python': platform.python_version(), 'interpreter': sys.executable, 'pyo3': _native.PYO3_VERSION}\n\
        for p in ('requests', 'httpx', 'grpcio'):\n    v[p] = metadata.version(p)\nprint(json.dumps(v))";
    let out = Command::new(python).args(["-c", SCRIPT]).output();
    let mut versions: BTreeMap<String, String> = out
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or_default();
    versions.entry("interpreter".into()).or_insert_with(|| python.display().to_string());
    versions
}

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
pub async fn measure(
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
    let done = tokio::task::spawn_blocking(move || callbench_servers::child::run_pinned(command, &cpus, &flag))
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
