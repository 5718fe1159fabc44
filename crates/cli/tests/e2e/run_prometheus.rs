//! End-to-end: `callbench run --prometheus` pushes every repetition of every cell into a stock
//! Prometheus; each repetition's `histogram_quantile(0.99, …)` agrees with the p99 results.json
//! holds for it within the native histogram's stated error.

use crate::common;

use common::prometheus::Prometheus;
use common::{Running, TempDir};
use serde_json::Value;
use std::time::Duration;

/// Schema 8's bucket width over its lower bound (callbench_export::native::relative_error(8)).
const STATED_ERROR: f64 = 0.002711;

const SUITE: &str = r#"
name = "prometheus-e2e"
description = "a run pushed to Prometheus"
repetitions = 2
[defaults]
duration = "150ms"
warmup = "50ms"

[[experiment]]
id = "seq"
title = "Sequential"
servers = ["rust-axum", "rust-tonic"]
workloads = ["students"]
concurrency = 1

[[experiment]]
id = "rate"
title = "Fixed rate"
servers = ["rust-axum"]
workloads = ["students"]
concurrency = 4
rate = 2000
"#;

#[test]
fn every_repetition_arrives_with_its_p99() {
    for name in ["rust-axum", "rust-tonic"] {
        common::server_bin(name); // built, so that the run needs no build
    }
    let prometheus = Prometheus::start();
    let dir = TempDir::new("run-prometheus");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let out = dir.str("results");
    let text = dir.str("run.prom");
    let url = prometheus.url();
    let args = [
        &dir.str("suite.toml"),
        "--out",
        &out,
        "--no-build",
        "--prometheus",
        &url,
        "--prometheus-text",
        &text,
        "--prometheus-label",
        "branch=test",
    ];
    let mut running = Running::command("run", &args);
    common::watch_children(&mut running, Duration::from_secs(180), |_, _| {});
    let run = running.finish(Duration::from_secs(5));
    assert_eq!(run.code, Some(0), "{}\n{}", run.all(), prometheus.log());
    assert!(run.stderr.contains("series pushed to"), "{}", run.all());

    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("results/results.json")).unwrap()).unwrap();
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    let series = prometheus.query("count(callbench_latency_seconds{suite=\"prometheus-e2e\",branch=\"test\"})");
    assert_eq!(series[0].1, 6.0, "3 cells × 2 repetitions");
    for cell in cells {
        let id = cell["id"].as_str().unwrap();
        for (i, repetition) in cell["runs"].as_array().unwrap().iter().enumerate() {
            let selector = format!("cell=\"{id}\",repetition=\"{}\"", i + 1);
            let ours = repetition["latency_us"]["p99"].as_f64().unwrap() * 1e-6;
            let expr = format!("histogram_quantile(0.99, callbench_latency_seconds{{{selector}}})");
            let theirs = prometheus.query(&expr);
            assert_eq!(theirs.len(), 1, "{expr}: {theirs:?}");
            let error = (theirs[0].1 - ours).abs() / ours;
            assert!(error <= STATED_ERROR, "{id} #{}: Prometheus {} s, callbench {ours} s", i + 1, theirs[0].1);
            let labels = &theirs[0].0;
            assert_eq!(labels["experiment"], cell["experiment"], "{labels:#}");
            assert_eq!(labels["server"], cell["server"], "{labels:#}");
            assert_eq!(labels["protocol"], cell["transport"], "{labels:#}");
            let calls = prometheus.query(&format!("callbench_calls{{{selector},outcome=\"ok\"}}"));
            assert_eq!(calls[0].1, repetition["calls_ok"].as_f64().unwrap(), "{id}");
        }
    }
    let exposition = std::fs::read_to_string(&text).unwrap();
    assert_eq!(exposition.matches("callbench_latency_seconds_count{").count(), 6, "{exposition}");
}
