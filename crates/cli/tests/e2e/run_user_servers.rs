//! End-to-end: a suite in a folder outside the repository that brings its own servers and calls
//! (`[[server]]`, `[[call]]`), as a user's suite would. Servers none of us wrote: Python's
//! http.server (REST, serving the suite folder's files) and grpc-go's route_guide_server (gRPC),
//! each started by its command with the port filled in, pinned, its CPU measured, and stopped; a
//! second route_guide_server started by the test is named by its URL and pid. As root, the
//! http.server also runs behind an emulated 10 ms link, and its calls pay the round trip.

use crate::common;

use common::{installed, Guard, Running, TempDir};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

const PATRIOTS_PATH: &str = r#"{"latitude": 407838351, "longitude": -746143763}"#;

/// route_guide.proto as grpc-go v1.29.1 published it (Go module cache, filled by scripts/setup).
fn route_guide_proto_dir() -> String {
    let cache = Command::new("go").args(["env", "GOMODCACHE"]).output().expect("go is not on PATH: run scripts/setup");
    let cache = String::from_utf8_lossy(&cache.stdout).trim().to_string();
    let dir = format!("{cache}/google.golang.org/grpc@v1.29.1/examples/route_guide/routeguide");
    installed(&format!("{dir}/route_guide.proto"));
    dir
}

/// The processes whose working directory is `dir`: the servers a run started there.
fn running_in(dir: &std::path::Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd == dir))
        .map(|e| std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default().replace('\0', " "))
        .collect()
}

#[test]
fn a_suite_outside_the_repo_starts_its_own_servers_and_measures_their_calls() {
    let route_guide = installed("~/go/bin/route_guide_server");
    let proto_dir = route_guide_proto_dir();
    let dir = TempDir::new("user-suite");
    std::fs::write(dir.path("feature.json"), "{\"name\": \"Patriots Path\"}\n").unwrap();
    // One already running, as a user's own service: named by its URL and pid.
    let port = common::free_port();
    let mut running = Guard::spawn(
        Command::new(&route_guide)
            .args(["-port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let addr = format!("127.0.0.1:{port}");
    assert!(common::wait_listening(&addr, Duration::from_secs(30)), "route_guide_server did not listen on {addr}");
    let suite = format!(
        r#"
name = "mine"

[[server]]
name = "files"
protocol = "rest"
start = ["python3", "-m", "http.server", "--bind", "{{host}}", "{{port}}"]
language = "python"
framework = "http.server"

[[server]]
name = "routes"
protocol = "grpc"
start = ["{route_guide}", "-port", "{{port}}"]

[[server]]
name = "routes-running"
protocol = "grpc"
url = "grpc://{addr}"
pids = [{pid}]

[[call]]
name = "feature"
rest = {{ path = "/feature.json", status = [200] }}
grpc = {{ method = "routeguide.RouteGuide/GetFeature", data_lines = "points.ndjson", template = true, proto = ["{proto_dir}/route_guide.proto"], import_paths = ["{proto_dir}"] }}

[[experiment]]
id = "one"
title = "One call at a time"
servers = ["files", "routes", "routes-running"]
workloads = ["feature"]
concurrency = 1
answer = "One call at a time"

[[experiment]]
id = "far"
title = "Across a 10 ms round trip"
servers = ["files"]
workloads = ["feature"]
concurrency = 1
network = {{ rtt = "10ms" }}
optional = true
"#,
        pid = running.id(),
    );
    std::fs::write(dir.path("suite.toml"), suite).unwrap();
    // The gRPC call's messages, in turn, relative to the suite's folder: a point of the guide's, and
    // one a template moves per call.
    let points =
        format!("{PATRIOTS_PATH}\n{{\"latitude\": {{{{int 400000000 420000000}}}}, \"longitude\": -746143763}}\n");
    std::fs::write(dir.path("points.ndjson"), points).unwrap();
    let args = ["--repetitions", "2", "--duration", "100ms", "--warmup", "20ms", "-q"];
    let run = Running::command("run", &[&args[..], &[&dir.str("suite.toml"), "--out", &dir.str("out")]].concat())
        .finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    let left = running_in(&dir.path(""));
    assert!(left.is_empty(), "left running: {left:?}");
    for file in ["results.json", "report.md", "report.html"] {
        assert!(dir.path("out").join(file).exists(), "{file}");
    }
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out").join("results.json")).unwrap()).unwrap();
    common::validate_results(&results);
    let cells = results["cells"].as_array().unwrap();
    let cell = |id: &str| cells.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id}: {}", run.all()));
    for id in ["one/feature/files", "one/feature/routes", "one/feature/routes-running"] {
        let c = cell(id);
        assert_eq!(c["status"], "ok", "{c:#}");
        // Started or named by its pid, each server's CPU is measured.
        assert!(c["summary"]["server_cpu_us_per_call"]["median"].as_f64().is_some_and(|v| v > 0.0), "{c:#}");
    }
    assert_eq!(cell("one/feature/routes")["transport"], "grpc");
    // The answer compares the suite's REST and gRPC servers; the seed articles' table is not theirs.
    assert!(run.stdout.contains("- One call at a time (feature, "), "{}", run.stdout);
    assert!(!run.stdout.contains("The seed articles, reproduced"), "{}", run.stdout);
    let servers = results["servers"].as_array().unwrap();
    let files = servers.iter().find(|s| s["name"] == "files").unwrap();
    assert_eq!((files["language"].as_str(), files["verify"].is_null()), (Some("python"), true), "{files:#}");
    let named = servers.iter().find(|s| s["name"] == "routes-running").unwrap();
    assert_eq!(named["endpoint"]["url"], format!("grpc://{addr}/routeguide.RouteGuide/GetFeature"));
    // The running one is the user's: still running after the run.
    assert!(running.alive(), "the user's own server was stopped");

    let far = results["experiments"].as_array().unwrap().iter().find(|e| e["id"] == "far").unwrap().clone();
    if unsafe { libc::geteuid() } != 0 {
        assert!(far["skipped"].is_string(), "without root the link is skipped, saying why: {far:#}");
        return;
    }
    let c = cell("far/feature/files");
    assert_eq!(c["status"], "ok", "{c:#}");
    // Every call crosses the link at least once, there and back.
    let p50 = c["summary"]["latency_p50_us"]["median"].as_f64().unwrap();
    assert!(p50 >= 10_000.0, "a 10 ms round trip at least, measured {p50} µs: {c:#}");
}
