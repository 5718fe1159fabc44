//! callbench's statistics and reports for results written from Python: the same medians,
//! intervals, noise flags, bottleneck calls, comparisons and renderers as `callbench run`.

use callbench_report::write;
use callbench_results::analysis;
use callbench_results::model::{Results, SCHEMA};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RESULTS_SCHEMA", SCHEMA)?;
    m.add_function(wrap_pyfunction!(summarise_results, m)?)?;
    m.add_function(wrap_pyfunction!(write_reports, m)?)?;
    Ok(())
}

fn parse(json: &str) -> PyResult<Results> {
    let results: Results =
        serde_json::from_str(json).map_err(|e| PyValueError::new_err(format!("not a callbench results.json: {e}")))?;
    if results.schema != SCHEMA {
        return Err(PyValueError::new_err(format!("schema '{}', expected '{SCHEMA}'", results.schema)));
    }
    Ok(results)
}

/// Fills every cell's summary (median and 95% interval of each metric, widened to the suite's
/// interval floor), noise flag, bottleneck and disturbed note, and the comparisons of every experiment, from the
/// cells' runs; returns the completed results.json text.
#[pyfunction]
fn summarise_results(json: &str) -> PyResult<String> {
    let mut results = parse(json)?;
    let (clients, servers) = (results.environment.client_cpus.len(), results.environment.server_cpus.len());
    let floor = results.suite.interval_floor;
    for i in 0..results.cells.len() {
        let headline = results
            .experiment(&results.cells[i].experiment)
            .map_or_else(|| "wall_us_per_call".to_string(), |e| e.headline.clone());
        analysis::summarise(&mut results.cells[i], &headline, floor, clients, servers);
        results.cells[i].disturbed = callbench_machine::interference::disturbed_note(&results.cells[i].runs);
    }
    results.comparisons =
        results.experiments.iter().flat_map(|e| analysis::compare_experiment(&results, &e.id)).collect();
    serde_json::to_string_pretty(&results).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Writes report.md and report.html for the results.json text `json` into `dir`.
#[pyfunction]
fn write_reports(json: &str, dir: std::path::PathBuf) -> PyResult<()> {
    let results = parse(json)?;
    write::write_reports(&results, &dir).map_err(|e| PyOSError::new_err(format!("{}: {e}", dir.display())))
}
