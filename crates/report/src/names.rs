//! The words the reports use for metrics, cells and statuses.

use callbench_results::format;
use callbench_results::model::{Cell, CellStatus, Experiment, Results};

/// A metric in words: `p50 latency`, `server CPU per call`.
pub fn metric_label(metric: &str) -> String {
    match metric {
        "throughput_per_s" => "throughput".into(),
        "latency_mean_us" => "mean latency".into(),
        "client_cpu_us_per_call" => "client CPU per call".into(),
        "server_cpu_us_per_call" => "server CPU per call".into(),
        "client_cpu_cores" => "client CPU".into(),
        "server_cpu_cores" => "server CPU".into(),
        "server_rss_peak_kib" => "server peak memory".into(),
        "wire_sent_per_call" => "wire bytes sent per call".into(),
        "wire_received_per_call" => "wire bytes received per call".into(),
        "ip_sent_per_call" => "IP bytes sent per call (counted outside the client)".into(),
        "ip_received_per_call" => "IP bytes received per call (counted outside the client)".into(),
        "rate_achieved" => "achieved rate".into(),
        "connections_opened" => "connections opened".into(),
        "duration_s" => "run duration".into(),
        "wall_us_per_call" => "wall time per call".into(),
        other => match other.strip_prefix("latency_").and_then(|p| p.strip_suffix("_us")) {
            Some(percentile) => format!("{percentile} latency"),
            None => other.replace('_', " "),
        },
    }
}

/// A metric in words with its unit, for column headers and axis titles: `p50 latency (µs)`.
pub fn metric_title(metric: &str, unit: &str) -> String {
    if unit.is_empty() {
        metric_label(metric)
    } else {
        format!("{} ({unit})", metric_label(metric))
    }
}

/// The kebab-case name of a status, as in results.json.
pub fn status(s: CellStatus) -> &'static str {
    match s {
        CellStatus::Ok => "ok",
        CellStatus::Partial => "partial",
        CellStatus::ServerCrashed => "server-crashed",
        CellStatus::NotMeasured => "not-measured",
        CellStatus::Interrupted => "interrupted",
        CellStatus::Error => "error",
    }
}

/// The status with its reason: `server-crashed: server exited with signal 11`.
pub fn status_with_error(cell: &Cell) -> String {
    match &cell.error {
        Some(e) if !e.trim().is_empty() => format!("{}: {}", status(cell.status), one_line(e)),
        _ => status(cell.status).into(),
    }
}

/// Newlines and runs of blanks become one space (errors can carry a server's multi-line output).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What names a cell among the others of a report: its server, with the transport when the same
/// server runs over several (`rust-actix (rest-h2)`). Also the series name in charts and legends.
pub fn series(r: &Results, cell: &Cell) -> String {
    let several = r.cells.iter().any(|c| c.server == cell.server && c.transport != cell.transport);
    if several {
        format!("{} ({})", cell.server, cell.transport)
    } else {
        cell.server.clone()
    }
}

/// Where a cell sits in its experiment besides its server: `auth`, `students, connections = 50`.
pub fn cell_context(exp: Option<&Experiment>, cell: &Cell) -> String {
    match (exp.and_then(|e| e.sweep.as_deref()), swept_value(exp, cell)) {
        (Some(sweep), Some(x)) => format!("{}, {sweep} = {x}", cell.workload),
        _ => cell.workload.clone(),
    }
}

/// The cell's value of its experiment's swept parameter: a number as the charts place it, or a
/// word (`mode = per-request`, `start = cold`) from the cell's settings.
pub fn swept_value(exp: Option<&Experiment>, cell: &Cell) -> Option<String> {
    let sweep = exp?.sweep.as_deref()?;
    match (cell.x, cell.params.get(sweep)) {
        // As the suite wrote it when it is text (`10ms`, `1.2`): a number alone would lose its unit.
        (_, Some(serde_json::Value::String(s))) => Some(s.clone()),
        (Some(x), _) => Some(format::swept(x)),
        (None, Some(v)) => Some(v.to_string()),
        (None, None) => None,
    }
}

/// A cell in words: `rust-actix, auth` or `rust-tonic, students, rate = 5,000`.
pub fn cell_title(r: &Results, cell: &Cell) -> String {
    format!("{}, {}", series(r, cell), cell_context(r.experiment(&cell.experiment), cell))
}

/// True for the statuses whose figures are missing or incomplete.
pub fn is_failure(s: CellStatus) -> bool {
    !matches!(s, CellStatus::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_in_words() {
        assert_eq!(metric_label("latency_p50_us"), "p50 latency");
        assert_eq!(metric_label("latency_p99.9_us"), "p99.9 latency");
        assert_eq!(metric_label("server_cpu_us_per_call"), "server CPU per call");
        assert_eq!(metric_label("something_new"), "something new");
        assert_eq!(metric_title("throughput_per_s", "calls/s"), "throughput (calls/s)");
    }

    #[test]
    fn a_swept_value_keeps_the_unit_it_was_written_with() {
        let exp: Experiment = serde_json::from_value(
            serde_json::json!({"id": "e", "title": "e", "description": "", "seeds": [], "sweep": "rtt",
                "headline": "h", "references": []}),
        )
        .unwrap();
        let cell = |x: Option<f64>, params: serde_json::Value| -> Cell {
            serde_json::from_value(serde_json::json!({
                "id": "e/auth/a", "experiment": "e", "server": "a", "transport": "rest-h1", "workload": "auth",
                "params": params, "x": x, "status": "ok", "runs": [], "summary": {}, "spectrum": [],
                "bottleneck": "", "noisy": false
            }))
            .unwrap()
        };
        assert_eq!(swept_value(Some(&exp), &cell(Some(10.0), serde_json::json!({"rtt": "10ms"}))).unwrap(), "10ms");
        // Results written before the value was recorded: the number charted.
        assert_eq!(swept_value(Some(&exp), &cell(Some(10.0), serde_json::json!({}))).unwrap(), "10");
        let calls = Experiment { sweep: Some("calls".into()), ..exp.clone() };
        assert_eq!(
            swept_value(Some(&calls), &cell(Some(1000.0), serde_json::json!({"calls": 1000}))).unwrap(),
            "1,000"
        );
    }

    #[test]
    fn errors_fit_on_one_line() {
        assert_eq!(one_line("exited\n  with signal 11\n"), "exited with signal 11");
    }
}
