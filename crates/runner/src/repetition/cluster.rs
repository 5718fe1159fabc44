//! One repetition of a cell made by the nodes of a Ray cluster together (`cluster` in the suite):
//! `python -m callbench.distributed` with the cell's own `callbench load` flags, its merged report
//! and histogram read back as the repetition's figures, each worker's share kept beside them. The
//! server's CPU is sampled here throughout and read over the merged measured window.

use super::outcome::Measured;
use crate::suite::ClusterSpec;
use callbench_engine::clock::monotonic_seconds;
use callbench_load::LoadSpec;
use callbench_machine::process_group::{self, CpuReading};
use callbench_primitives::scratch::ScratchDir;
use callbench_results::model::{ClusterRun, Latency, RunMetrics, WorkerShare};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the server's CPU is read while the cluster runs.
const CPU_EVERY: Duration = Duration::from_millis(20);

/// How many times a repetition whose workers did not start together is made: on a busy machine a
/// worker's wake-up can come milliseconds late once (bench/results/methodology-2026-11.md#cluster-workers-start),
/// and such a run is measured again, as a disturbed repetition is, rather than fail its cell.
const SKEWED_ATTEMPTS: usize = 3;

/// Runs `spec` split across `cluster`'s workers with `python` (which has the package and Ray);
/// `server_pids` are the server's processes (its process group's, or an endpoint's `--server-pid`s).
pub(crate) async fn measure(
    python: &Path,
    spec: &LoadSpec,
    cluster: &ClusterSpec,
    server_pids: &[i32],
    cancel: Arc<AtomicBool>,
) -> Result<Measured, String> {
    let mut skewed = Vec::new();
    while skewed.len() < SKEWED_ATTEMPTS {
        match attempt(python, spec, cluster, server_pids, cancel.clone()).await? {
            Attempt::Measured(mut m) => {
                if let Some(run) = m.metrics.cluster.as_mut() {
                    run.remade_for_skew = skewed;
                }
                return Ok(*m);
            }
            Attempt::Skewed(why) => skewed.push(why),
        }
        if cancel.load(Ordering::Relaxed) {
            break;
        }
    }
    Err(format!("the cluster run was invalid {} times: {}", skewed.len(), skewed.join("; ")))
}

/// One run of the coordinator: its repetition, or why its workers did not start together.
enum Attempt {
    Measured(Box<Measured>),
    Skewed(String),
}

async fn attempt(
    python: &Path,
    spec: &LoadSpec,
    cluster: &ClusterSpec,
    server_pids: &[i32],
    cancel: Arc<AtomicBool>,
) -> Result<Attempt, String> {
    // The coordinator's files, in a directory of their own (new, private), removed at the end.
    let dir = ScratchDir::new("callbench-cluster").map_err(|e| e.to_string())?;
    let (result_file, histogram_file) = (dir.join("result.json"), dir.join("latency.hdr"));
    let mut command = tokio::process::Command::new(python);
    command
        .args(["-m", "callbench.distributed", "--quiet", "--address", &cluster.ray])
        .args(["--workers", &cluster.workers.to_string()])
        .arg("--out")
        .arg(&result_file)
        .arg("--histogram-out")
        .arg(&histogram_file)
        .args(spec.to_flags())
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(ms) = cluster.skew_limit_ms() {
        command.arg("--skew-limit-ms").arg(ms.to_string());
    }
    let sampler = Sampler::start(server_pids.to_vec());
    let clock = (Instant::now(), monotonic_seconds());
    let mut child =
        command.spawn().map_err(|e| format!("cannot run {} -m callbench.distributed: {e}", python.display()))?;
    let stderr = child.stderr.take().map(|mut pipe| {
        tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut text).await;
            text
        })
    });
    let mut interrupted = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.map_err(|e| format!("the cluster's coordinator: {e}"))?,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {
                if cancel.load(Ordering::Relaxed) && !interrupted {
                    // Ctrl-C to the coordinator: it stops its workers and keeps what they measured.
                    interrupted = true;
                    if let Some(pid) = child.id() {
                        // SAFETY: a signal to our own child.
                        unsafe { libc::kill(pid as i32, libc::SIGINT) };
                    }
                }
            }
        }
    };
    let readings = sampler.stop();
    let err = match stderr {
        Some(task) => task.await.unwrap_or_default(),
        None => String::new(),
    };
    let last_line = || err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output").trim().to_string();
    let text = std::fs::read_to_string(&result_file)
        .map_err(|_| format!("the cluster run gave no result ({status}): {}", last_line()))?;
    let result: Value = serde_json::from_str(&text).map_err(|e| format!("the cluster's result: {e}"))?;
    if result["valid"] != Value::Bool(true) && !interrupted {
        let problems: Vec<&str> =
            result["problems"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if only_skewed(&result, &problems) {
            return Ok(Attempt::Skewed(problems.join("; ")));
        }
        return Err(format!("the cluster run was invalid: {}", problems.join("; ")));
    }
    let merged = &result["merged"];
    let histogram = read_histogram(&histogram_file)?;
    let mut metrics = metrics(merged, &result, cluster)?;
    let window = Duration::from_secs_f64(merged["duration_s"].as_f64().unwrap_or(0.0));
    // The measured window on the coordinator's clock (this machine's): the common start, then the warm-up.
    if let Some(start) = result["start_monotonic"].as_f64() {
        let from = clock.0 + Duration::from_secs_f64((start - clock.1).max(0.0)) + spec.warmup;
        if let Some((cpu, span)) = server_cpu(&readings, from, from + window) {
            let calls = metrics.calls_ok.max(1) as f64;
            metrics.server_cpu_us_per_call = Some(cpu.as_secs_f64() * 1e6 / calls);
            metrics.server_cpu_cores = Some(cpu.as_secs_f64() / span.as_secs_f64().max(1e-9));
        }
    }
    Ok(Attempt::Measured(Box::new(Measured { metrics, histogram, window, cancelled: interrupted })))
}

/// Whether the run's one problem is that its workers started further apart than the limit: every
/// worker measured its share, only not together.
fn only_skewed(result: &Value, problems: &[&str]) -> bool {
    let ms = |key: &str| result[key].as_f64();
    problems.len() == 1 && matches!((ms("start_skew_ms"), ms("skew_limit_ms")), (Some(s), Some(l)) if s > l)
}

/// The merged report as a repetition's figures, with each worker's share.
fn metrics(merged: &Value, result: &Value, cluster: &ClusterSpec) -> Result<RunMetrics, String> {
    let n = |v: &Value| v.as_f64().unwrap_or(0.0);
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    let latency = |v: &Value| {
        v.is_object().then(|| Latency {
            p50: n(&v["p50"]),
            p90: n(&v["p90"]),
            p99: n(&v["p99"]),
            p99_9: n(&v["p99.9"]),
            max: n(&v["max"]),
            mean: n(&v["mean"]),
        })
    };
    if !merged.is_object() {
        return Err("the cluster run measured nothing".into());
    }
    let window = n(&merged["duration_s"]);
    let rate = &merged["rate"];
    let busiest = result["per_worker"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let r = &w["report"];
            let calls = count(&r["calls"]["ok"]) + count(&r["calls"]["errors"]);
            n(&r["client_cpu_us_per_call"]) * calls as f64 / 1e6 / n(&r["duration_s"]).max(1e-9)
        })
        .fold(0.0, f64::max);
    let per_worker = result["per_worker"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let report = &w["report"];
            WorkerShare {
                name: w["name"].as_str().unwrap_or_default().to_string(),
                address: w["address"].as_str().unwrap_or_default().to_string(),
                segment: w["segment"].as_str().unwrap_or_default().to_string(),
                calls_ok: count(&report["calls"]["ok"]),
                calls_errors: count(&report["calls"]["errors"]),
                throughput_per_s: n(&report["throughput_per_s"]),
                client_cpu_us_per_call: n(&report["client_cpu_us_per_call"]),
                start_late_ms: w["start_late_ms"].as_f64(),
                clock_uncertainty_ms: w["clock_uncertainty_ms"].as_f64(),
            }
        })
        .collect();
    Ok(RunMetrics {
        calls_ok: count(&merged["calls"]["ok"]),
        calls_errors: count(&merged["calls"]["errors"]),
        errors: serde_json::from_value(merged["errors"].clone()).unwrap_or_default(),
        duration_s: window,
        throughput_per_s: n(&merged["throughput_per_s"]),
        latency_us: latency(&merged["latency_us"]),
        latency_uncorrected_us: rate.is_object().then(|| latency(&merged["latency_uncorrected_us"])).flatten(),
        rate_requested: rate["requested"].as_f64(),
        rate_achieved: rate["achieved"].as_f64(),
        connections_opened: count(&merged["connections_opened"]),
        goaways: count(&merged["goaways"]),
        retries: count(&merged["retries"]),
        wire_sent_per_call: n(&merged["wire_bytes_per_call"]["sent"]),
        wire_received_per_call: n(&merged["wire_bytes_per_call"]["received"]),
        payload_sent_per_call: n(&merged["payload_bytes_per_call"]["sent"]),
        payload_received_per_call: n(&merged["payload_bytes_per_call"]["received"]),
        client_cpu_us_per_call: n(&merged["client_cpu_us_per_call"]),
        // The busiest client machine's cores: what says whether the client side was the limit.
        client_cpu_cores: busiest,
        cluster: Some(ClusterRun {
            ray: cluster.ray.clone(),
            workers: cluster.workers,
            start_skew_ms: n(&result["start_skew_ms"]),
            behind_schedule: serde_json::from_value(result["behind_schedule"].clone()).unwrap_or_default(),
            per_worker,
            remade_for_skew: vec![],
        }),
        ..RunMetrics::default()
    })
}

fn read_histogram(path: &Path) -> Result<Histogram<u64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("the cluster's histogram {}: {e}", path.display()))?;
    Deserializer::new().deserialize(&mut &bytes[..]).map_err(|e| format!("the cluster's histogram: {e:?}"))
}

/// The server's CPU between the readings around `from` and `to`, and the span between them.
fn server_cpu(readings: &[CpuReading], from: Instant, to: Instant) -> Option<(Duration, Duration)> {
    let at = |r: &CpuReading| r.at;
    let a = readings.iter().rev().find(|r| at(r).is_some_and(|t| t <= from)).or(readings.first())?;
    let b = readings.iter().find(|r| at(r).is_some_and(|t| t >= to)).or(readings.last())?;
    let span = b.at?.checked_duration_since(a.at?)?;
    Some((process_group::cpu_between(a, b), span))
}

/// Reads the server's CPU every [`CPU_EVERY`] on a thread of its own until stopped.
struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    readings: Arc<Mutex<Vec<CpuReading>>>,
}

impl Sampler {
    fn start(pids: Vec<i32>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let readings = Arc::new(Mutex::new(Vec::new()));
        let thread = (!pids.is_empty()).then(|| {
            let (stop, readings) = (stop.clone(), readings.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let reading = process_group::read_cpu(&pids);
                    readings.lock().unwrap_or_else(|p| p.into_inner()).push(reading);
                    std::thread::sleep(CPU_EVERY);
                }
            })
        });
        Sampler { stop, thread, readings }
    }

    fn stop(mut self) -> Vec<CpuReading> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        std::mem::take(&mut *self.readings.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_run_whose_one_problem_is_its_skew_is_made_again() {
        let run = |skew: f64, problems: &[&str]| {
            let result = serde_json::json!({"start_skew_ms": skew, "skew_limit_ms": 5.0, "problems": problems});
            only_skewed(&result, problems)
        };
        assert!(run(5.94, &["the workers started 5.94 ms apart (limit 5.0 ms)"]));
        assert!(!run(5.94, &["worker 2 (10.0.0.2) died", "the workers started 5.94 ms apart (limit 5.0 ms)"]));
        assert!(!run(1.0, &["worker 2 (10.0.0.2) died"]));
    }
}
