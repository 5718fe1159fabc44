//! End-to-end: `callbench run` on a processing experiment (seed 000's work as real programs in
//! several languages, warm and cold), and the errors of a bad one.

use crate::common;

use common::TempDir;
use serde_json::Value;
use std::process::Command;

const SUITE: &str = r#"
name = "processing-e2e"
repetitions = 2

[[experiment]]
id = "processing"
kind = "processing"
title = "Processing"
headline = "wall_us_per_call"
servers = ["rust", "python", "node"]
workloads = ["auth"]
iterations = 3
warmup_iterations = 1
sweep = { param = "start", values = ["warm", "cold"] }
[[experiment.reference]]
seed = "000"
what = "Python, processing time"
article = "8.22 ms"
cell = "auth/python/start=warm"
metric = "wall_us_per_call"
"#;

#[test]
fn programs_run_warm_and_cold_and_report_beside_the_article() {
    let tmp = TempDir::new("processing");
    let suite = tmp.path("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let out = tmp.path("results");
    let run = common::run_cmd(Command::new(common::callbench()).args([
        "run",
        "--no-build",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.contains("peak RSS"), "{}", run.stdout);
    let results: Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    common::validate_results(&results);
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    let wall = |id: &str| {
        let cell = cells.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no cell {id}"));
        assert_eq!(cell["status"], "ok", "{cell}");
        assert_eq!(cell["transport"], "process");
        assert_eq!(cell["runs"].as_array().unwrap().len(), 2);
        cell["summary"]["wall_us_per_call"]["median"].as_f64().unwrap()
    };
    for program in ["rust", "python", "node"] {
        let (warm, cold) = (
            wall(&format!("processing/auth/{program}/start=warm")),
            wall(&format!("processing/auth/{program}/start=cold")),
        );
        assert!(warm > 0.0 && cold > warm, "{program}: warm {warm} µs, cold {cold} µs (cold includes start-up)");
    }
    let python = results["servers"].as_array().unwrap().iter().find(|s| s["name"] == "python").unwrap();
    assert_eq!(python["protocol"], "process");
    assert!(python["versions"]["runtime"].as_str().unwrap().starts_with("Python 3"), "{python}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| program | language | start |"), "{md}");
    assert!(md.contains("| 000 | Python, processing time | 8.22 ms |"), "{md}");
}

#[test]
fn a_bad_processing_experiment_is_one_line_and_runs_nothing() {
    let tmp = TempDir::new("processing-bad");
    let cases = [
        (SUITE.replace(r#"["rust", "python", "node"]"#, r#"["rust", "cobol"]"#), "unknown program 'cobol'"),
        (SUITE.replace(r#"workloads = ["auth"]"#, r#"workloads = ["students"]"#), "auth workload only"),
        (SUITE.replace(r#"["warm", "cold"]"#, r#"["warm", "lukewarm"]"#), "must be warm or cold"),
        (SUITE.replace(r#"kind = "processing""#, r#"kind = "magic""#), "unknown kind"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let suite = tmp.path(&format!("suite{i}.toml"));
        std::fs::write(&suite, text).unwrap();
        let out = tmp.path(&format!("out{i}"));
        let run = common::run_cmd(Command::new(common::callbench()).args([
            "run",
            suite.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        assert_ne!(run.code, Some(0), "{}", run.all());
        common::assert_one_line(&run, needle);
        assert!(!out.join("results.json").exists(), "nothing is written for a bad suite");
    }
}
