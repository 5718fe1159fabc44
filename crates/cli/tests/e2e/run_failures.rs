//! End-to-end: `callbench run` when things go wrong — Ctrl-C mid-run, a server killed mid-run, bad
//! suites and flags. Every time: a valid results.json with what was measured, no server left.

use crate::common;

use common::{Running, TempDir};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const SUITE: &str = r#"
name = "failures"
repetitions = 4
[defaults]
duration = "400ms"
warmup = "50ms"
concurrency = 2

[[experiment]]
id = "first"
title = "First"
servers = ["rust-actix", "rust-tonic"]
workloads = ["students"]

[[experiment]]
id = "second"
title = "Second"
servers = ["rust-actix"]
workloads = ["cars"]
"#;

fn results(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Runs in the background until `ready(results.json)` holds (at most 60 s), then calls `act` with
/// callbench's pid and the server pids seen so far; returns the output and every server pid seen.
fn run_until(dir: &TempDir, ready: impl Fn(&Value) -> bool, act: impl FnOnce(u32, &[u32])) -> (common::Run, Vec<u32>) {
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let out = dir.str("results");
    let mut running = Running::command("run", &[&dir.str("suite.toml"), "--out", &out, "-q", "--no-build"]);
    let file = dir.path("results/results.json");
    let mut act = Some(act);
    let servers = common::watch_children(&mut running, Duration::from_secs(90), |pid, servers| {
        if act.is_some() && results(&file).is_some_and(|r| ready(&r)) {
            (act.take().unwrap())(pid, servers);
        }
    });
    assert!(act.is_none(), "the run ended before the moment to act came");
    (running.finish(Duration::from_secs(10)), servers)
}

fn runs_of(r: &Value, id: &str) -> usize {
    r["cells"].as_array().unwrap().iter().find(|c| c["id"] == id).map_or(0, |c| c["runs"].as_array().unwrap().len())
}

fn assert_gone(pids: &[u32]) {
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "server {pid} outlived the run");
    }
}

#[test]
fn ctrl_c_leaves_a_valid_partial_results_file_and_no_server() {
    let dir = TempDir::new("run-sigint");
    let (run, servers) = run_until(
        &dir,
        |r| runs_of(r, "first/students/rust-tonic") >= 1,
        |pid, _| unsafe {
            libc::kill(pid as i32, libc::SIGINT);
        },
    );
    assert_eq!(run.code, Some(130), "{}", run.all());
    assert!(!servers.is_empty());
    assert_gone(&servers);
    let r = results(&dir.path("results/results.json")).expect("results.json");
    common::validate_results(&r);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["complete"], false);
    assert!(runs_of(&r, "first/students/rust-actix") >= 1, "what was measured is kept");
    let statuses: Vec<&str> = r["cells"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert!(statuses.contains(&"interrupted"), "{statuses:?}");
    assert!(dir.path("results/report.html").exists() && dir.path("results/report.md").exists());
}

#[test]
fn a_server_killed_mid_run_is_recorded_and_the_suite_goes_on() {
    let dir = TempDir::new("run-kill");
    let (run, servers) = run_until(
        &dir,
        |r| runs_of(r, "first/students/rust-tonic") >= 1,
        |_, servers| {
            let actix = servers
                .iter()
                .find(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.contains("rust-actix")))
                .expect("rust-actix is running");
            unsafe { libc::kill(*actix as i32, libc::SIGKILL) };
        },
    );
    assert_eq!(run.code, Some(1), "a cell was not fully measured: {}", run.all());
    assert!(run.stderr.contains("first/students/rust-actix"), "{}", run.all());
    assert_gone(&servers);
    let r = results(&dir.path("results/results.json")).expect("results.json");
    common::validate_results(&r);
    assert_eq!(r["complete"], true, "the suite completed");
    let cell = |id: &str| r["cells"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    let crashed = cell("first/students/rust-actix");
    assert_eq!(crashed["status"], "server-crashed", "{crashed:#}");
    assert!(crashed["error"].as_str().unwrap().contains("died"), "{crashed:#}");
    assert_eq!(cell("first/students/rust-tonic")["status"], "ok");
    assert_eq!(runs_of(&r, "first/students/rust-tonic"), 4);
    // The next experiment started rust-actix again, verified it and measured it.
    let second = cell("second/cars/rust-actix");
    assert_eq!(second["status"], "ok", "{second:#}");
    assert_eq!(runs_of(&r, "second/cars/rust-actix"), 4);
    let actix = r["servers"].as_array().unwrap().iter().find(|s| s["name"] == "rust-actix").unwrap();
    assert!(actix["failures"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().contains("died")), "{actix:#}");
    let md = std::fs::read_to_string(dir.path("results/report.md")).unwrap();
    assert!(md.contains("server-crashed") || md.contains("crashed"), "the report shows the failure:\n{md}");
}

#[test]
fn bad_suites_and_flags_get_one_line_errors_and_start_nothing() {
    let dir = TempDir::new("run-bad");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path(name), text).unwrap();
        dir.str(name)
    };
    let unknown =
        write("unknown.toml", "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['nginx-php']\nworkloads=['auth']");
    let typo = write(
        "typo.toml",
        "name='x'\nrepetitons=3\n[[experiment]]\nid='a'\ntitle='t'\nservers=['inproc']\nworkloads=['auth']",
    );
    let h2grpc =
        write("h2.toml", "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-tonic+h2']\nworkloads=['auth']");
    let out = dir.str("out");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![&unknown, "--out", &out], "unknown server 'nginx-php'"),
        (vec![&typo, "--out", &out], "repetitons"),
        (vec![&h2grpc, "--out", &out], "REST servers"),
        (vec!["/nonexistent/suite.toml"], "cannot read the suite"),
        (vec!["--client-cpus", "0", "--server-cpus", "0", "--out", &out], "overlap"),
        (vec!["--client-cpus", "x"], "CPU list"),
    ];
    for (args, needle) in cases {
        let run = common::run_cmd(Command::new(common::callbench()).args(["run", "--no-build"]).args(&args));
        assert_ne!(run.code, Some(0), "{args:?}: {}", run.all());
        let line = run.stderr.trim();
        assert!(line.contains(needle) && !line.contains('\n'), "{args:?}: one line naming '{needle}':\n{}", run.all());
    }
    assert!(!dir.path("out/results.json").exists(), "nothing written");
    // An existing results folder is never overwritten.
    std::fs::create_dir_all(dir.path("full")).unwrap();
    std::fs::write(dir.path("full/results.json"), "{}").unwrap();
    let run = common::run_cmd(Command::new(common::callbench()).args(["run", "--out", &dir.str("full")]));
    assert!(run.code != Some(0) && run.stderr.contains("already holds results"), "{}", run.all());
    assert_eq!(std::fs::read_to_string(dir.path("full/results.json")).unwrap(), "{}");
    // report/compare of something that is not a results folder.
    let run = common::run_cmd(Command::new(common::callbench()).args(["report", &dir.str("nothing")]));
    assert!(run.code == Some(1) && run.stderr.trim().lines().count() == 1, "{}", run.all());
}
