//! `callbench._native`: the Rust workloads of callbench called in-process from Python (the
//! boundary seed 004 measured), and callbench's own statistics and report renderers, so results
//! written from Python go through the same code as `callbench run`'s.

mod load;
mod machine;
mod reports;
mod workloads;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PYO3_VERSION", pyo3_version())?;
    // The checkout the package was built from: where `python -m callbench.boundary` finds the
    // servers when it is run from elsewhere.
    m.add("SOURCE_ROOT", concat!(env!("CARGO_MANIFEST_DIR"), "/.."))?;
    workloads::register(m)?;
    reports::register(m)?;
    load::register(m)?;
    machine::register(m)?;
    Ok(())
}

/// The PyO3 version this module was built with (from Cargo.lock through the build).
fn pyo3_version() -> &'static str {
    env!("CALLBENCH_PYO3_VERSION")
}
