//! The machine around a run from Python, recorded as `callbench run` records it: idle CPUs kept
//! awake while the run lasts, and the steadiness probe whose loop spread widens every timing
//! interval (results.json's `steadiness` and `suite.interval_floor`).

use callbench_runner::{idle_hold, steadiness};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CpusAwake>()?;
    m.add_function(wrap_pyfunction!(keep_cpus_awake, m)?)?;
    Ok(())
}

/// Idle CPUs kept polling until `release()` (or the object is collected, or the process ends:
/// the kernel drops the request when its file closes).
#[pyclass(module = "callbench._native")]
struct CpusAwake {
    guard: Option<idle_hold::Awake>,
    idle: callbench_report::model::IdleHold,
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

    /// The steadiness probe on these CPUs (about 0.2 s each and 1 s of wake-ups), taken while this
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
