//! End-to-end: `callbench run URL…` on endpoints it did not start — rust-actix and rust-tonic
//! started by the test as a user would start their own service — with the whole method of a run:
//! the default suite's questions, repetitions and intervals, REST against gRPC compared, server CPU
//! from `--server-pid` (and said to be missing without it), results.json, report.md, report.html.
//! The servers are the user's: still running after the run. A first call that fails stops the run
//! in one line before any results folder is made.

use crate::common;

use common::{start, Running, TempDir};
use serde_json::Value;
use std::time::Duration;

const QUICK: [&str; 7] = ["--repetitions", "2", "--duration", "60ms", "--warmup", "10ms", "-q"];

fn run(args: &[&str]) -> common::Run {
    // A guard against a hang, not a speed limit (disturbed repetitions are measured again).
    Running::command("run", &[&QUICK[..], args].concat()).finish(Duration::from_secs(600))
}

fn results(dir: &TempDir) -> Value {
    let text = std::fs::read_to_string(dir.path("out").join("results.json")).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("JSON");
    common::validate_results(&results);
    results
}

#[test]
fn rest_and_grpc_endpoints_get_the_runs_method_and_an_answer() {
    let mut actix = start("rust-actix", &[]);
    let mut tonic = start("rust-tonic", &[]);
    let dir = TempDir::new("endpoints");
    let rest = format!("http://{}/students", actix.addr);
    let grpc = format!("grpc://{}/callbench.v1.Students/List", tonic.addr);
    let (rest_pid, grpc_pid) = (actix.pid().to_string(), tonic.pid().to_string());
    let out = dir.str("out");
    let run = run(&[&rest, &grpc, "--server-pid", &rest_pid, "--server-pid", &grpc_pid, "--out", &out]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    for file in ["results.json", "report.md", "report.html"] {
        assert!(dir.path("out").join(file).exists(), "{file}: {}", run.all());
    }
    let results = results(&dir);
    let ids: Vec<&str> = results["experiments"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["sequential", "closed-50", "fixed-rate", "new-connection"]);
    let servers = results["servers"].as_array().unwrap();
    let urls: Vec<&str> = servers.iter().map(|s| s["endpoint"]["url"].as_str().unwrap()).collect();
    assert_eq!(urls, [rest.as_str(), grpc.as_str()]);
    assert_eq!(servers[1]["endpoint"]["call"], "callbench.v1.Students/List");
    for cell in results["cells"].as_array().unwrap() {
        assert_eq!(cell["status"], "ok", "{cell:#}");
        assert_eq!(cell["workload"], "call");
        assert!(cell["summary"]["server_cpu_us_per_call"]["median"].as_f64().is_some(), "{}", cell["id"]);
        assert!(cell["summary"]["throughput_per_s"]["lo"].as_f64().is_some(), "an interval: {}", cell["id"]);
    }
    // The answer first, REST against gRPC by the run's own verdicts, and no seed table.
    assert!(
        run.stdout.contains("calling your endpoints (not started by callbench; server CPU measured"),
        "{}",
        run.stdout
    );
    let one_at_a_time = run
        .stdout
        .lines()
        .find(|l| l.starts_with("- One call at a time (call, "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        one_at_a_time.contains("REST ") && one_at_a_time.contains("gRPC ") && one_at_a_time.contains("REST / gRPC"),
        "{one_at_a_time}"
    );
    assert!(run.stdout.contains("- A kept connection, and a new one per call (call): REST (rest) "), "{}", run.stdout);
    assert!(!run.stdout.contains("seed articles"), "{}", run.stdout);
    let report = std::fs::read_to_string(dir.path("out").join("report.md")).unwrap();
    assert!(report.contains(&format!("rest: your endpoint {rest}, a call is GET /students")), "{report}");
    // The user's servers are theirs: callbench did not stop them.
    assert!(actix.alive() && tonic.alive());
}

#[test]
fn without_a_server_pid_the_report_says_server_cpu_was_not_measured() {
    let actix = start("rust-actix", &[]);
    let dir = TempDir::new("endpoints-no-pid");
    let rest = format!("api=http://{}/students", actix.addr);
    let out = dir.str("out");
    let run = Running::command(
        "run",
        &["--repetitions", "2", "--duration", "60ms", "--warmup", "10ms", &rest, "--out", &out],
    )
    .finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stderr.contains("api (http://"), "{}", run.all());
    assert!(run.stderr.contains("no --server-pid, so its server's CPU is not measured"), "{}", run.all());
    let results = results(&dir);
    assert_eq!(results["servers"][0]["name"], "api");
    for cell in results["cells"].as_array().unwrap() {
        assert!(cell["summary"].get("server_cpu_us_per_call").is_none(), "{cell:#}");
    }
    assert!(run.stdout.contains("server CPU not measured: give --server-pid"), "{}", run.stdout);
    assert!(run.stdout.contains("Server CPU was not measured for api (http://"), "{}", run.stdout);
    let report = std::fs::read_to_string(dir.path("out").join("report.md")).unwrap();
    assert!(report.contains("its CPU not measured (no --server-pid)"), "{report}");
}

#[test]
fn a_failing_first_call_stops_the_run_in_one_line() {
    let actix = start("rust-actix", &[]);
    let tonic = start("rust-tonic", &[]);
    let closed = format!("127.0.0.1:{}", common::free_port());
    for (target, needle) in [
        (format!("http://{}/no/such/route", actix.addr), "the first call failed: HTTP 404"),
        (format!("grpc://{}/callbench.v1.Students/Nope", tonic.addr), "Nope"),
        (format!("http://{closed}/"), "rest (http://"),
        // A documentation address (TEST-NET-3): refused before any connection without --allow-remote.
        ("http://203.0.113.7:8080/".to_string(), "--allow-remote"),
    ] {
        let dir = TempDir::new("endpoints-fail");
        let out = dir.str("out");
        let run = Running::command("run", &[&target, "--out", &out]).finish(Duration::from_secs(120));
        common::assert_one_line(&run, needle);
        assert!(!dir.path("out").join("results.json").exists(), "{target}: {}", run.all());
    }
}

#[test]
fn the_rest_twin_comes_from_the_protos_google_api_http_rule() {
    let actix = start("rust-actix", &[]);
    let tonic = start("rust-tonic", &[]);
    let dir = TempDir::new("endpoints-twin");
    let (rest, grpc) = (format!("http://{}", actix.addr), format!("grpc://{}", tonic.addr));
    let (rest_pid, grpc_pid) = (actix.pid().to_string(), tonic.pid().to_string());
    let out = dir.str("out");
    // As docs/src/your-api.md gives it: the rule says PUT /auth/{id} with the rest of the message as the body.
    let run = run(&[
        "--proto",
        "docs/examples/twin/auth.proto",
        "--call",
        "callbench.v1.Auth/Test",
        "--rest",
        &rest,
        "--grpc",
        &grpc,
        "-d",
        r#"{"id": 7, "password": "secret"}"#,
        "--server-pid",
        &rest_pid,
        "--server-pid",
        &grpc_pid,
        "--out",
        &out,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let results = results(&dir);
    let servers = results["servers"].as_array().unwrap();
    assert_eq!(servers[0]["endpoint"]["url"], rest.as_str(), "the --rest given");
    assert_eq!(servers[0]["endpoint"]["call"], "PUT /auth/7");
    assert_eq!(servers[1]["endpoint"]["url"], format!("{grpc}/callbench.v1.Auth/Test"));
    assert!(results["cells"].as_array().unwrap().iter().all(|c| c["status"] == "ok"), "{}", run.all());
    assert!(
        run.stdout.contains("- One call at a time (call, ") && run.stdout.contains("REST / gRPC"),
        "{}",
        run.stdout
    );
    // A method whose .proto has no rule has no twin: one line, nothing written.
    let run = Running::command(
        "run",
        &[
            "--proto",
            "contract/proto/callbench/v1/students.proto",
            "--call",
            "callbench.v1.Students/List",
            "--rest",
            &rest,
            "--grpc",
            &grpc,
            "--out",
            &dir.str("none"),
        ],
    )
    .finish(Duration::from_secs(60));
    common::assert_one_line(&run, "callbench.v1.Students.List has no google.api.http rule");
    assert!(!dir.path("none").exists(), "{}", run.all());
}

#[test]
fn thresholds_on_the_cells_exit_99_when_one_is_crossed() {
    let actix = start("rust-actix", &[]);
    let rest = format!("http://{}/students", actix.addr);
    let dir = TempDir::new("endpoints-thresholds");
    let met = run(&[&rest, "--threshold", "errors<=0", "--threshold", "calls_per_s>0", "--out", &dir.str("met")]);
    assert_eq!(met.code, Some(0), "{}", met.all());
    let cells = std::fs::read_to_string(dir.path("met").join("results.json")).unwrap();
    let cells: Value = serde_json::from_str(&cells).unwrap();
    let count = cells["cells"].as_array().unwrap().len();
    assert!(met.stdout.contains(&format!("Thresholds: {0} of {0} met", 2 * count)), "{}", met.stdout);
    // No answer over loopback HTTP comes back in a nanosecond: every cell crosses it.
    let crossed = run(&[&rest, "--threshold", "p50<1ns", "--out", &dir.str("crossed")]);
    assert_eq!(crossed.code, Some(99), "{}", crossed.all());
    assert!(crossed.stdout.contains(&format!("Thresholds: 0 of {count} met")), "{}", crossed.stdout);
    assert!(crossed.stdout.contains("- sequential/call/rest: p50<1ns crossed ("), "{}", crossed.stdout);
    let line = crossed.stderr.lines().last().unwrap_or_default();
    assert!(line.starts_with(&format!("callbench: {count} threshold(s) crossed: ")), "{}", crossed.all());
    let results = std::fs::read_to_string(dir.path("crossed").join("results.json")).unwrap();
    let results: Value = serde_json::from_str(&results).unwrap();
    common::validate_results(&results);
    assert_eq!(results["cells"][0]["thresholds"][0]["met"], false, "{results:#}");
    // A quantile a run does not keep is refused before anything runs.
    let refused = Running::command("run", &[&rest, "--threshold", "p75<1s"]).finish(Duration::from_secs(60));
    assert_eq!(refused.code, Some(2), "{}", refused.all());
    assert!(refused.stderr.contains("a run keeps p50, p90, p99 and p99.9"), "{}", refused.all());
}
