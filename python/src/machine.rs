//! The machine around a run from Python, recorded as `callbench run` records it: idle CPUs kept
//! awake while the run lasts, and the steadiness probe whose loop spread widens every timing
//! interval (results.json's `steadiness` and `suite.interval_floor`), and what else used the pinned
//! CPUs during each measured window (a repetition's `interference` and `disturbed`).

use callbench_machine::interference::{self, Sides};
use callbench_machine::{idle_hold, steadiness};
use callbench_results::model::RunMetrics;
use callbench_runner::slow_spells;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CpusAwake>()?;
    m.add_function(wrap_pyfunction!(keep_cpus_awake, m)?)?;
    m.add_class::<MachineSnapshot>()?;
    m.add_function(wrap_pyfunction!(machine_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(interference_between, m)?)?;
    m.add_function(wrap_pyfunction!(slow_runs, m)?)?;
    m.add_function(wrap_pyfunction!(slow_against, m)?)?;
    m.add_function(wrap_pyfunction!(may_rerun, m)?)?;
    m.add("SLOW_ATTEMPTS_PER_REPETITION", slow_spells::SLOW_ATTEMPTS_PER_REPETITION)?;
    Ok(())
}

/// Idle CPUs kept polling until `release()` (or the object is collected, or the process ends:
/// the kernel drops the request when its file closes).
#[pyclass(module = "callbench._native")]
struct CpusAwake {
    guard: Option<idle_hold::Awake>,
    idle: callbench_results::model::IdleHold,
}

#[pymethods]
impl CpusAwake {
    /// Whether the request is held (False after `release()`, with `allow_idle`, or without
    /// permission to open /dev/cpu_dma_latency).
    #[getter]
    fn held(&self) -> bool {
        self.guard.is_some() && self.idle.held
    }

    /// Lets idle CPUs sleep again.
    fn release(&mut self) {
        self.guard = None;
    }

    /// The steadiness probe on these CPUs (about 0.3 s each and 1 s of wake-ups), taken while this
    /// hold stands, as results.json's `steadiness` (JSON text): its warnings, every CPU's fixed
    /// loop, `loop_spread` (the interval floor `callbench run` uses), the wake-up round trip and
    /// whether idle CPUs were kept awake.
    fn probe_steadiness(&self, client_cpus: Vec<usize>, server_cpus: Vec<usize>) -> PyResult<String> {
        let probed = steadiness::probe_with(&client_cpus, &server_cpus, self.idle.clone());
        serde_json::to_string(&probed).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(&mut self, _kind: Py<PyAny>, _value: Py<PyAny>, _traceback: Py<PyAny>) -> bool {
        self.release();
        false
    }
}

/// Keeps idle CPUs out of the idle states that take time to leave (/dev/cpu_dma_latency held at
/// 0), unless `allow_idle`: one call at a time otherwise also measures how fast the machine wakes a
/// sleeping CPU. Never fails: without permission the hold is simply not taken, and the steadiness
/// probe says so.
#[pyfunction]
#[pyo3(signature = (allow_idle = false))]
fn keep_cpus_awake(allow_idle: bool) -> CpusAwake {
    let (guard, idle) = idle_hold::take(allow_idle);
    CpusAwake { guard: Some(guard), idle }
}

/// The machine at one edge of a measured window: every CPU's counters, this process's CPU time and
/// its reaped children's, the server's CPU time and context switches.
#[pyclass(module = "callbench._native", frozen)]
struct MachineSnapshot(interference::Snapshot);

/// Reads the machine now; `server_pids`: the server's processes (none in-process).
#[pyfunction]
#[pyo3(signature = (server_pids = Vec::new()))]
fn machine_snapshot(server_pids: Vec<i32>) -> MachineSnapshot {
    MachineSnapshot(interference::snapshot(&server_pids))
}

/// What else used the pinned CPUs between `before` and `after` (JSON text): `interference` as
/// results.json records it for a repetition of `calls` calls, and `disturbed`, the reason with its
/// figure when other processes or the hypervisor took more than `callbench run` allows (else null).
/// `server_cpus` empty for an in-process window: no server side to judge.
#[pyfunction]
fn interference_between(
    before: &MachineSnapshot,
    after: &MachineSnapshot,
    client_cpus: Vec<usize>,
    server_cpus: Vec<usize>,
    calls: u64,
) -> PyResult<String> {
    let sides = Sides { client: &client_cpus, server: &server_cpus };
    let measured = interference::between(&before.0, &after.0, &sides, calls);
    let disturbed = measured.as_ref().and_then(interference::disturbed);
    let out = serde_json::json!({ "interference": measured, "disturbed": disturbed });
    Ok(out.to_string())
}

fn runs_of(json: &str) -> PyResult<Vec<RunMetrics>> {
    serde_json::from_str(json).map_err(|e| PyValueError::new_err(format!("not a list of runs: {e}")))
}

/// The repetitions of `runs_json` (a cell's `runs`) measured in a slow spell of the machine: the
/// CPU per call of a side judged (`client`, `server`: those doing the same work for every call)
/// above the cell's median by more than `callbench run` allows. (index, reason), slowest first.
#[pyfunction]
fn slow_runs(runs_json: &str, client: bool, server: bool) -> PyResult<Vec<(usize, String)>> {
    Ok(slow_spells::slow_runs(&runs_of(runs_json)?, (client, server)))
}

/// Whether a disturbed repetition is measured again at once, by `callbench run`'s rule: this
/// repetition measured again `this_repetition` times so far, its cell `cell_reruns` times in all.
#[pyfunction]
fn may_rerun(this_repetition: usize, cell_reruns: u32, repetitions: usize) -> bool {
    slow_spells::may_rerun(this_repetition, cell_reruns, repetitions)
}

/// Whether `run_json`, a repetition measured again, is itself slow against the medians of
/// `runs_json`: then it replaces none of them.
#[pyfunction]
fn slow_against(run_json: &str, runs_json: &str, client: bool, server: bool) -> PyResult<bool> {
    let run: RunMetrics =
        serde_json::from_str(run_json).map_err(|e| PyValueError::new_err(format!("not a run: {e}")))?;
    Ok(slow_spells::slow_against(&run, &runs_of(runs_json)?, (client, server)))
}
