//! `callbench load` from Python: the same flags, the same Rust engine, its report as JSON and its
//! latency histograms serialised (HdrHistogram V2, deflated), so runs of several machines can be
//! merged exactly. A run may be prepared first (target resolved, server probed: `prepare_load`)
//! and then wait for a start time on the monotonic clock, so that machines started by a
//! coordinator start together.

use callbench_engine::clock::monotonic_seconds;
use callbench_engine::stats::percentiles;
use callbench_engine::{Edge, EdgeHook};
use callbench_load::watch::{RunView, Watch};
use callbench_load::{build, LoadReport, LoadSpec};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_load, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_load, m)?)?;
    m.add_function(wrap_pyfunction!(planned_length, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_percentiles, m)?)?;
    m.add_function(wrap_pyfunction!(monotonic_now, m)?)?;
    m.add_class::<Cancel>()?;
    m.add_class::<Progress>()?;
    m.add_class::<PreparedLoad>()?;
    Ok(())
}

/// Ends a `run_load` early from another thread, as Ctrl-C ends `callbench load`: the calls in
/// flight finish and the report holds what was measured, marked `interrupted`.
#[pyclass(frozen)]
#[derive(Default)]
struct Cancel {
    flag: Arc<AtomicBool>,
}

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Self {
        Cancel::default()
    }

    fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    fn cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

/// How many calls a `run_load` has done so far (warm-up included), read from another thread while
/// it runs: what a coordinator adds up into the live progress of a split run.
#[pyclass(frozen)]
#[derive(Default)]
struct Progress {
    done: Arc<Mutex<Option<Arc<AtomicU64>>>>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress::default()
    }

    /// Calls done; 0 before the run started.
    fn done(&self) -> u64 {
        self.done.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |d| d.load(Ordering::Relaxed))
    }
}

/// Hands the engine's count of calls done to a [`Progress`].
struct Counting(Arc<Mutex<Option<Arc<AtomicU64>>>>);

impl Watch for Counting {
    fn run_started(&self, run: RunView) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.done);
    }
}

#[derive(clap::Parser)]
struct Flags {
    #[command(flatten)]
    spec: LoadSpec,
}

/// CLOCK_MONOTONIC in seconds: Python's `time.monotonic()` on Linux, and the clock `Instant` reads.
#[pyfunction]
pub fn monotonic_now() -> f64 {
    monotonic_seconds()
}

/// Runs `callbench load <args>` and returns (report JSON, latency histogram, uncorrected latency
/// histogram, started_at): the histograms in µs, serialised; `started_at` when the engine started
/// its run, on the monotonic clock. With `start_at` (monotonic seconds), the run starts then,
/// after the target was prepared; a start time already past is an error, not a late start. With
/// `cancel`, another thread can end the run early; with `progress`, read how far it got.
#[pyfunction]
#[pyo3(signature = (args, start_at=None, cancel=None, progress=None))]
fn run_load<'py>(
    py: Python<'py>,
    args: Vec<String>,
    start_at: Option<f64>,
    cancel: Option<&Bound<'py, Cancel>>,
    progress: Option<&Bound<'py, Progress>>,
) -> PyResult<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>, f64)> {
    prepare_load(py, args)?.run(py, start_at, cancel, progress)
}

/// How long `callbench load <args>` is planned to take in seconds, warm-up included (its `-z`, or
/// its rate shape's end); None when only a count of calls bounds it.
#[pyfunction]
fn planned_length(args: Vec<String>) -> PyResult<Option<f64>> {
    let flags = <Flags as clap::Parser>::try_parse_from(std::iter::once("load".to_string()).chain(args))
        .map_err(|e| PyValueError::new_err(first_line(&e.to_string())))?;
    Ok(flags.spec.planned_length().map(|d| d.as_secs_f64()))
}

/// `callbench load <args>` prepared (flags checked, target resolved under the loopback rule, the
/// server probed), not yet run: a coordinator prepares every machine before it chooses their
/// common start time, so a slow preparation cannot make one start late.
#[pyfunction]
fn prepare_load(py: Python<'_>, args: Vec<String>) -> PyResult<PreparedLoad> {
    let flags = <Flags as clap::Parser>::try_parse_from(std::iter::once("load".to_string()).chain(args))
        .map_err(|e| PyValueError::new_err(first_line(&e.to_string())))?;
    let spec = flags.spec;
    if spec.objective.is_some() {
        return Err(PyValueError::new_err("--slo searches with many runs: use `callbench load --slo`"));
    }
    let prepared = py.detach(|| -> Result<Prepared, String> {
        let runtime = match spec.threads {
            1 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
            n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
        }
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        let built = runtime.block_on(build::build(&spec))?;
        Ok(Prepared { runtime, spec, built })
    });
    Ok(PreparedLoad { prepared: Mutex::new(Some(prepared.map_err(PyRuntimeError::new_err)?)) })
}

/// A load ready to run once (see [`prepare_load`]).
#[pyclass(frozen)]
struct PreparedLoad {
    prepared: Mutex<Option<Prepared>>,
}

struct Prepared {
    runtime: tokio::runtime::Runtime,
    spec: LoadSpec,
    built: build::Built,
}

#[pymethods]
impl PreparedLoad {
    /// Runs it (once), as `run_load` does.
    #[pyo3(signature = (start_at=None, cancel=None, progress=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        start_at: Option<f64>,
        cancel: Option<&Bound<'py, Cancel>>,
        progress: Option<&Bound<'py, Progress>>,
    ) -> PyResult<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>, f64)> {
        let prepared = self
            .prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this prepared load has already run"))?;
        let flag = cancel.map(|c| c.get().flag.clone()).unwrap_or_default();
        let watch = Counting(progress.map(|p| p.get().done.clone()).unwrap_or_default());
        let outcome = py.detach(|| run(prepared, start_at, flag, &watch));
        let (report, latency, uncorrected, started) = outcome.map_err(PyRuntimeError::new_err)?;
        Ok((report, PyBytes::new(py, &latency), PyBytes::new(py, &uncorrected), started))
    }
}

type Outcome = (String, Vec<u8>, Vec<u8>, f64);

fn run(
    prepared: Prepared,
    start_at: Option<f64>,
    cancel: Arc<AtomicBool>,
    watch: &Counting,
) -> Result<Outcome, String> {
    let Prepared { runtime, spec, built } = prepared;
    runtime.block_on(async {
        let mut plan = spec.plan(built.concurrency, None, cancel)?;
        let started: Arc<Mutex<Option<f64>>> = Arc::default();
        let at_start = started.clone();
        plan.load.edges = Some(EdgeHook(Arc::new(move |edge| {
            if let Edge::RunStart = edge {
                *at_start.lock().unwrap_or_else(|p| p.into_inner()) = Some(monotonic_now());
            }
        })));
        if let Some(at) = start_at {
            let wait = at - monotonic_now();
            if wait < 0.0 {
                return Err(format!("the start time passed {:.1} ms before this machine was ready", -wait * 1e3));
            }
            // The runtime's timer wakes up to a millisecond late: it sleeps to 2 ms before, then spins.
            let at = Instant::now() + Duration::from_secs_f64(wait);
            tokio::time::sleep_until((at - Duration::from_millis(2).min(at - Instant::now())).into()).await;
            while Instant::now() < at {
                std::hint::spin_loop();
            }
        }
        let result = built.run(plan, watch).await?;
        let report = LoadReport::new(&spec, &built, &result, None);
        let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        let started = started.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or(f64::NAN);
        Ok((json, serialise(&result.stats.latency_us)?, serialise(&result.stats.latency_uncorrected_us)?, started))
    })
}

fn serialise(h: &Histogram<u64>) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).map_err(|e| format!("histogram: {e:?}"))?;
    Ok(bytes)
}

fn deserialise(bytes: &[u8]) -> PyResult<Histogram<u64>> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| PyValueError::new_err(format!("not a serialised HdrHistogram: {e:?}")))
}

/// One histogram holding every value of `histograms` (as HdrHistogram's add: counts summed per
/// bucket, never percentiles averaged), serialised.
#[pyfunction]
fn merge_histograms<'py>(py: Python<'py>, histograms: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let mut parts = histograms.iter().map(|b| deserialise(b));
    let mut merged = parts.next().ok_or_else(|| PyValueError::new_err("no histogram to merge"))??;
    for h in parts {
        merged.add(h?).map_err(|e| PyValueError::new_err(format!("histograms do not merge: {e:?}")))?;
    }
    Ok(PyBytes::new(py, &serialise(&merged).map_err(PyValueError::new_err)?))
}

/// `{p50, p90, p95, p99, p99.9, max, min, mean, count}` of a serialised histogram (µs), as
/// `callbench load` reports them; None when it holds no value.
#[pyfunction]
fn histogram_percentiles(bytes: Vec<u8>) -> PyResult<Option<String>> {
    let h = deserialise(&bytes)?;
    let Some(p) = percentiles(&h) else { return Ok(None) };
    let mut value = serde_json::to_value(p).map_err(|e| PyValueError::new_err(e.to_string()))?;
    value["count"] = h.len().into();
    Ok(Some(value.to_string()))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string()
}
