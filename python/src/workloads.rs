//! The workloads, with the interfaces seed 004 gave its bindings: `life_setup()` returns a new set
//! of (x, y) cells, `life_step(board, ntimes)` advances that set in place. Errors of the contract
//! become `ValueError` (invalid argument) and `LookupError` (not found).

use callbench_workloads::{auth, echo, error::ErrorKind, error::WorkloadError, life, users};
use pyo3::exceptions::{PyLookupError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PySet;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(noop, m)?)?;
    m.add_function(wrap_pyfunction!(life_setup, m)?)?;
    m.add_function(wrap_pyfunction!(life_step, m)?)?;
    m.add_function(wrap_pyfunction!(sha512_hex, m)?)?;
    m.add_function(wrap_pyfunction!(echo_message, m)?)?;
    m.add_function(wrap_pyfunction!(echo_payload, m)?)?;
    m.add_function(wrap_pyfunction!(write_users_json, m)?)?;
    m.add_function(wrap_pyfunction!(descriptor_set, m)?)?;
    m.add_class::<UserStore>()?;
    Ok(())
}

fn to_py(e: WorkloadError) -> PyErr {
    match e.kind {
        ErrorKind::NotFound => PyLookupError::new_err(e.message),
        ErrorKind::InvalidArgument => PyValueError::new_err(e.message),
        _ => pyo3::exceptions::PyRuntimeError::new_err(e.message),
    }
}

/// Does nothing: what remains is the cost of a call from Python into Rust and back.
#[pyfunction]
fn noop() {}

/// The acorn, as a new set of (x, y) tuples.
#[pyfunction]
fn life_setup(py: Python<'_>) -> PyResult<Bound<'_, PySet>> {
    PySet::new(py, life::setup().board.iter().map(|c| (c.0, c.1)))
}

/// Advances `board` (a set of (x, y) tuples) by `ntimes` generations, in place.
#[pyfunction]
fn life_step(board: &Bound<'_, PySet>, ntimes: u32) -> PyResult<()> {
    let cells = board
        .iter()
        .map(|item| item.extract::<(i64, i64)>().map(|(x, y)| life::Cell(x, y)))
        .collect::<PyResult<Vec<_>>>()?;
    let next = life::step(&cells, ntimes).map_err(to_py)?;
    board.clear();
    for c in next.board {
        board.add((c.0, c.1))?;
    }
    Ok(())
}

/// The lowercase hex SHA-512 of `text` (the auth workload's work).
#[pyfunction]
fn sha512_hex(text: &str) -> String {
    auth::sha512_hex(text)
}

/// The echo workload: `message` as the REST body (`{"records": [...]}`) checked and returned.
#[pyfunction]
fn echo_message<'py>(py: Python<'py>, message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let parsed: echo::EchoMessage =
        pythonize::depythonize(message).map_err(|e| PyValueError::new_err(format!("not an echo message: {e}")))?;
    let answer = echo::echo(parsed).map_err(to_py)?;
    pythonize::pythonize(py, &answer).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The contract's deterministic echo message of `records` records (about 190 bytes of JSON each).
#[pyfunction]
fn echo_payload(py: Python<'_>, records: usize) -> PyResult<Bound<'_, PyAny>> {
    pythonize::pythonize(py, &echo::payload(records)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Writes the contract's users.json (10,000 users) to `path`.
#[pyfunction]
fn write_users_json(path: std::path::PathBuf) -> PyResult<()> {
    users::write_users_json(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))
}

/// The contract's encoded FileDescriptorSet (contract/proto/callbench/v1/*.proto), for dynamic messages.
#[pyfunction]
fn descriptor_set(py: Python<'_>) -> Bound<'_, pyo3::types::PyBytes> {
    pyo3::types::PyBytes::new(py, callbench_contract::FILE_DESCRIPTOR_SET)
}

/// The auth workload's user store: `UserStore(path, mode="preloaded")`, then `.test(id, password)`.
#[pyclass(frozen)]
struct UserStore {
    store: auth::UserStore,
}

#[pymethods]
impl UserStore {
    #[new]
    #[pyo3(signature = (path, mode = "preloaded"))]
    fn new(path: std::path::PathBuf, mode: &str) -> PyResult<Self> {
        let mode: auth::Mode = mode.parse().map_err(PyValueError::new_err)?;
        let store =
            auth::UserStore::open(&path, mode).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Ok(UserStore { store })
    }

    /// The hash of `password` for user `id` (LookupError: no such user; ValueError: bad password).
    fn test(&self, id: i64, password: &str) -> PyResult<String> {
        self.store.test(id, password).map(|r| r.hash).map_err(to_py)
    }

    #[getter]
    fn mode(&self) -> &'static str {
        match self.store.mode() {
            auth::Mode::Preloaded => "preloaded",
            auth::Mode::PerRequest => "per-request",
        }
    }
}
