//! Python experiments (`kind = "python"`, seed 004): the caller is Python, through one of five
//! mechanisms — `pyo3` (the Rust workload in-process through the bindings), `python` (the same
//! workload in pure Python), `requests+SERVER` and `httpx+SERVER` (REST/JSON) or `grpcio+SERVER`.
//! The runner starts, pins and verifies the servers as for any experiment; each repetition is one
//! run of `python -m callbench.boundary.cell` pinned to the client CPUs, which prints its metrics
//! in the results.json shape (see python/callbench/boundary/cell.py).

use crate::plan::CellPlan;
use crate::repetition::Measured;
use callbench_harness::repo::Repo;
use callbench_report::model::{RunMetrics, ServerRecord};
use hdrhistogram::Histogram;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub const WORKLOADS: [&str; 5] = ["noop", "life-setup", "life", "auth", "echo"];

/// How Python reaches the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mechanism {
    /// `pyo3`, `python`, `requests`, `httpx` or `grpcio`.
    pub client: String,
    /// The server it calls (over the wire only).
    pub server: Option<String>,
}

impl Mechanism {
    pub fn parse(text: &str) -> Result<Mechanism, String> {
        let (client, server) = match text.split_once('+') {
            Some((c, s)) => (c, Some(s.to_string())),
            None => (text, None),
        };
        let wire = matches!(client, "requests" | "requests-nosession" | "httpx" | "grpcio");
        if !wire && !matches!(client, "pyo3" | "python") {
            return Err(format!(
                "'{text}': unknown Python caller '{client}' (pyo3, python, requests+SERVER, requests-nosession+SERVER, \
                 httpx+SERVER, grpcio+SERVER)"
            ));
        }
        match (wire, &server) {
            (true, None) => Err(format!("'{text}': {client} needs a server: {client}+rust-axum, for example")),
            (true, Some(s)) if s.is_empty() || s.contains('+') => Err(format!("'{text}': bad server name '{s}'")),
            (false, Some(_)) => Err(format!("'{text}': {client} runs in-process and takes no server")),
            _ => Ok(Mechanism { client: client.to_string(), server }),
        }
    }

    pub fn transport(&self) -> &'static str {
        match self.client.as_str() {
            "pyo3" | "python" => "inproc",
            "grpcio" => "grpc",
            _ => "rest-h1",
        }
    }

    pub fn label(&self) -> String {
        match &self.server {
            Some(server) => format!("{}+{server}", self.client),
            None => self.client.clone(),
        }
    }

    /// Its results.json record (the server it calls has its own); `versions` from [`versions`].
    pub fn record(&self, versions: &BTreeMap<String, String>) -> ServerRecord {
        let (language, framework) = match self.client.as_str() {
            "pyo3" => ("Rust (from Python)", "the Rust workload through PyO3 bindings".to_string()),
            "python" => ("Python", "the same workload in pure Python".to_string()),
            "grpcio" => {
                ("Python", format!("gRPC with grpcio (one channel) to {}", self.server.as_deref().unwrap_or("")))
            }
            other => {
                ("Python", format!("REST/JSON with {other} (kept-alive) to {}", self.server.as_deref().unwrap_or("")))
            }
        };
        let library = match self.client.as_str() {
            "pyo3" => "pyo3",
            "python" => "",
            "grpcio" => "grpcio",
            "httpx" => "httpx",
            _ => "requests",
        };
        let mut versions: BTreeMap<String, String> = versions
            .iter()
            .filter(|(k, _)| ["python", "interpreter", library].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(server) = &self.server {
            versions.insert("server".into(), server.clone());
        }
        ServerRecord {
            name: self.label(),
            language: language.into(),
            framework,
            protocol: match self.transport() {
                "inproc" => "inproc",
                "grpc" => "grpc",
                _ => "rest",
            }
            .into(),
            versions,
            verify: None,
            failures: Vec::new(),
        }
    }
}

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

/// Calls per repetition when the suite sets none: seed 004's counts (setup ×1000, step
/// 10000/ntimes), auth and echo ×1000, the no-op ×2000 over the wire and ×200,000 in-process.
pub fn default_calls(workload: &str, ntimes: u32, transport: &str) -> u64 {
    match workload {
        "life" => (10_000 / u64::from(ntimes.max(1))).max(1),
        "noop" if transport == "inproc" => 200_000,
        "noop" => 2_000,
        _ => 1_000,
    }
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
    let done = tokio::task::spawn_blocking(move || callbench_harness::child::run_pinned(command, &cpus, &flag))
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
    fn mechanisms_parse_and_say_what_is_wrong() {
        let m = Mechanism::parse("requests+rust-axum").unwrap();
        assert_eq!((m.client.as_str(), m.server.as_deref(), m.transport()), ("requests", Some("rust-axum"), "rest-h1"));
        assert_eq!(m.label(), "requests+rust-axum");
        assert_eq!(Mechanism::parse("pyo3").unwrap().transport(), "inproc");
        let versions = BTreeMap::from([("grpcio".to_string(), "1.2".to_string()), ("httpx".into(), "3".into())]);
        let record = Mechanism::parse("grpcio+rust-tonic").unwrap().record(&versions);
        assert_eq!(record.protocol, "grpc");
        assert_eq!(record.versions.keys().collect::<Vec<_>>(), ["grpcio", "server"]);
        for (text, says) in [
            ("curl+rust-axum", "unknown Python caller"),
            ("httpx", "needs a server"),
            ("pyo3+rust-axum", "takes no server"),
            ("grpcio+", "bad server name"),
        ] {
            let err = Mechanism::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn default_calls_follow_the_article() {
        assert_eq!(default_calls("life", 1, "rest-h1"), 10_000);
        assert_eq!(default_calls("life", 1000, "inproc"), 10);
        assert_eq!(default_calls("life-setup", 1, "grpc"), 1_000);
        assert_eq!(default_calls("noop", 1, "inproc"), 200_000);
    }

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
