//! End-to-end: `callbench run` with a real busy process pinned to the server's CPU. The cells
//! measured against a server there are re-run and then marked `disturbed` with the figure; the
//! in-process cell, which uses only the client's CPU, is not; the steadiness probe warns.

use crate::common;

use common::{Guard, Running, TempDir};
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

const SUITE: &str = r#"
name = "disturbed"
repetitions = 2
[defaults]
duration = "300ms"
warmup = "50ms"
[[experiment]]
id = "closed"
title = "Closed loop beside a busy process"
servers = ["rust-actix", "inproc"]
workloads = ["students"]
concurrency = 8
"#;

/// CPU time of a process so far (utime + stime, in ticks).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
    let f: Vec<u64> = after.split_whitespace().map(|v| v.parse().unwrap_or(0)).collect();
    f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)
}

#[test]
fn a_busy_process_on_the_server_cpu_marks_its_cells_disturbed() {
    let dir = TempDir::new("disturbed");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    // Client on CPU 0, servers (and the busy loop) on CPU 1 — or both on CPU 0 on a 1-CPU machine.
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let server_cpu = if cpus > 1 { "1" } else { "0" };
    let busy = Guard::spawn(Command::new("taskset").args(["-c", server_cpu, "sh", "-c", "while :; do :; done"]));
    // The loop is at work once it has used CPU time of its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while cpu_ticks(busy.id()) < 2 {
        assert!(Instant::now() < deadline, "the busy loop never ran");
        std::thread::yield_now();
    }
    let out = dir.str("results");
    let args = [&dir.str("suite.toml"), "--out", &out, "--no-build", "--client-cpus", "0", "--server-cpus", server_cpu];
    // A hang guard: every repetition here is disturbed and measured again.
    let run = Running::command("run", &args).finish(Duration::from_secs(1200));
    drop(busy);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("results/results.json")).unwrap()).unwrap();
    let cell = |id: &str| results["cells"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    let served = cell("closed/students/rust-actix");
    let note = served["disturbed"].as_str().unwrap_or_else(|| panic!("not marked disturbed: {served:#}"));
    assert!(note.contains("% of the server CPUs used by other processes"), "{note}");
    assert!(served["reruns"].as_u64().unwrap_or(0) >= 1, "a disturbed repetition is measured again: {served:#}");
    for r in served["runs"].as_array().unwrap() {
        let other = r["interference"]["server_cpus_other"].as_f64().unwrap();
        assert!(other > 0.1, "the busy loop's share of the server CPU: {other}");
    }
    let inproc = cell("closed/students/inproc");
    if cpus > 1 {
        assert!(inproc["disturbed"].is_null(), "in-process calls use the client CPU only: {inproc:#}");
    }
    let warnings = results["steadiness"]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w.as_str().unwrap().contains(&format!("CPU {server_cpu} was"))),
        "the probe saw the busy CPU: {warnings:?}"
    );
    assert!(run.stdout.contains("disturbed"), "the terminal table marks it: {}", run.stdout);
    common::validate_results(&results);
}
