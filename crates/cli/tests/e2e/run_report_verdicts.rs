//! End-to-end: the report of a real `callbench run` (REST, gRPC and in-process on the Rust
//! servers) reads as one rule: no comparison line or summary sentence says "no significant
//! difference" beside a ratio interval that excludes 1, or names a side beside one that holds 1;
//! exact counts (bytes per call) carry no interval; no latency reads "0 µs"; the summary comes first.

use crate::common;

use common::{Running, TempDir};
use std::time::Duration;

const SUITE: &str = r#"
name = "verdicts"
repetitions = 5
[defaults]
duration = "100ms"
warmup = "50ms"
[[experiment]]
id = "sequential"
title = "Sequential"
headline = "wall_us_per_call"
servers = ["rust-actix", "rust-axum", "rust-tonic", "inproc"]
workloads = ["students"]
concurrency = 1
[[experiment]]
id = "closed"
title = "Closed loop"
servers = ["rust-actix", "rust-tonic", "inproc"]
workloads = ["students"]
concurrency = 16
"#;

#[test]
fn the_report_of_a_real_run_has_one_rule_for_every_verdict() {
    let dir = TempDir::new("verdicts");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let out = dir.str("results");
    let run = Running::command("run", &[&dir.str("suite.toml"), "--out", &out, "--no-build"])
        .finish(Duration::from_secs(1200)); // a hang guard: disturbed repetitions are re-run on a busy machine
    assert_eq!(run.code, Some(0), "{}", run.all());
    let md = std::fs::read_to_string(dir.path("results/report.md")).unwrap();
    // Every list line: the comparisons and the sentences of "What this run found".
    let items: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
    for line in &items {
        callbench_report::doc::comparisons::line_agrees(line).unwrap_or_else(|e| panic!("{e}\n{md}"));
        if line.contains("wire bytes") {
            assert!(!line.contains("× ["), "an exact count compared through an interval: {line}");
        }
    }
    let comparisons = items.iter().filter(|l| l.contains(" vs ") && l.contains(" — ")).count();
    assert!(comparisons >= 8, "{md}");
    // The tables give bytes per call as counted, without an interval either.
    let transport = |l: &str| l.split(" | ").nth(1).is_some_and(|t| t == "rest-h1" || t == "grpc");
    let cell_rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| rust-") && transport(l)).collect();
    assert!(cell_rows.len() >= 5, "{md}");
    for row in cell_rows {
        let cells: Vec<&str> = row.split(" | ").collect();
        let bytes = cells.iter().find(|c| c.contains(" / ") && !c.contains('[')).copied();
        assert!(bytes.is_some(), "the wire bytes column: {row}");
    }
    assert!(!md.contains(" 0 µs"), "a latency under the histograms' resolution reads as such: {md}");
    // Under a microsecond, in nanoseconds (the in-process call is, unless the machine is slow).
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("results/results.json")).unwrap()).unwrap();
    let inproc = results["cells"].as_array().unwrap().iter().find(|c| c["id"] == "sequential/students/inproc");
    let per_call = inproc.and_then(|c| c["summary"]["wall_us_per_call"]["median"].as_f64()).expect("inproc measured");
    if per_call < 1.0 {
        assert!(md.contains(" ns"), "in-process time per call ({per_call} µs) in nanoseconds: {md}");
    }
    let found = md.find("## What this run found").expect("a summary");
    assert!(found < md.find("| server").unwrap(), "the summary first");
    assert!(run.stdout.contains("What this run found"), "and at the end of the terminal output: {}", run.stdout);
}
