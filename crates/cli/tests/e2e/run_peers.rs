//! End-to-end: `callbench run` with every peer load tool (installed by scripts/setup) as the client
//! of one short cell against real reference servers. Each tool's claims are set beside the server's
//! own count of the calls it answered, and its connections and bytes as the network namespace it
//! ran in counted them; k6 has its reason; no tool or server outlives the run.

use crate::common;

use common::{Running, TempDir};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const CONCURRENCY: u64 = 8;

const SUITE: &str = r#"
name = "peers"
repetitions = 1
[defaults]
duration = "1s"
concurrency = 8

[[experiment]]
id = "rest"
title = "REST tools"
servers = ["rust-actix"]
workloads = ["auth"]
clients = ["callbench", "wrk", "ab", "h2load", "hey", "fortio", "vegeta", "oha", "locust", "locust-fast", "k6", "ghz"]

[[experiment]]
id = "grpc"
title = "gRPC tools"
servers = ["rust-tonic"]
workloads = ["auth"]
connections = 1
clients = ["ghz", "h2load", "locust-grpc"]
"#;

#[test]
fn every_peer_tool_runs_a_cell_and_its_claims_meet_the_servers_count() {
    let dir = TempDir::new("peers");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let mut running = Running::command("run", &[&dir.str("suite.toml"), "--out", &dir.str("results"), "--no-build"]);
    let pid = running.guard.id();
    let children = common::watch_children(&mut running, Duration::from_secs(300), |_, _| {});
    let run = running.finish(Duration::from_secs(5));
    for pid in &children {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{pid} (a tool or a server) outlived the run");
    }
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("results/results.json")).unwrap()).unwrap();
    common::validate_results(&results);
    assert_eq!(results["complete"], true, "{}", run.all());
    let cells = results["cells"].as_array().unwrap();
    let cell = |id: &str| cells.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no cell {id}: {}", run.all()));

    let measured = [
        "rest/auth/wrk+rust-actix",
        "rest/auth/ab+rust-actix",
        "rest/auth/h2load+rust-actix",
        "rest/auth/hey+rust-actix",
        "rest/auth/fortio+rust-actix",
        "rest/auth/vegeta+rust-actix",
        "rest/auth/oha+rust-actix",
        "rest/auth/locust+rust-actix",
        "rest/auth/locust-fast+rust-actix",
        "grpc/auth/ghz+rust-tonic",
        "grpc/auth/h2load+rust-tonic",
        "grpc/auth/locust-grpc+rust-tonic",
    ];
    for id in measured {
        let c = cell(id);
        assert_eq!(c["status"], "ok", "{c:#}");
        let r = &c["runs"][0];
        let peer = &r["peer"];
        let (ok, errors) = (r["calls_ok"].as_u64().unwrap(), r["calls_errors"].as_u64().unwrap());
        let answered = peer["server_answered"].as_u64().unwrap_or_else(|| panic!("the server's count: {c:#}"));
        assert!(ok > 20 && errors == 0, "{c:#}");
        // The server sent every answer the tool counts; it may have answered calls still in flight
        // when the tool stopped, which the tool dropped — never more than it had in flight.
        assert!(answered >= ok && answered <= ok + errors + CONCURRENCY, "answered {answered}, claimed {ok}: {c:#}");
        let tool = c["params"]["client"].as_str().unwrap();
        assert!(peer["command"].as_str().unwrap().starts_with(tool.split('-').next().unwrap()), "{c:#}");
        assert!(r["client_cpu_us_per_call"].as_f64().unwrap() > 0.0, "{c:#}");
        assert!(r["server_cpu_us_per_call"].as_f64().unwrap() > 0.0, "{c:#}");
        assert!(peer["rss_peak_kib"].as_u64().unwrap() > 100, "{c:#}");
        assert!(peer["latency_us"]["p50"].as_f64().unwrap() <= peer["latency_us"]["max"].as_f64().unwrap(), "{c:#}");
        assert!(c["summary"]["throughput_per_s"]["median"].as_f64().unwrap() > 0.0, "{c:#}");
        // Counted outside the tool, by the namespace it ran in: per call the server answered.
        assert!(c["summary"].get("wire_sent_per_call").is_none(), "a tool's socket bytes are not counted: {c:#}");
        let outside = &r["outside"];
        assert_eq!((&outside["calls"], &outside["calls_counted_by"]), (&peer["server_answered"], &"server".into()));
        let opened = outside["connections_opened"].as_u64().unwrap();
        assert!(opened >= 1 && opened <= answered + CONCURRENCY, "{c:#}");
        for direction in ["ip_sent_per_call", "ip_received_per_call"] {
            // At least a request's or an answer's bytes and one IP and TCP header per call.
            let bytes = outside[direction].as_f64().unwrap();
            assert!(bytes > 60.0 && bytes < 5000.0, "{direction} {bytes}: {c:#}");
        }
    }
    // wrk keeps its 8 connections, after one blocking connect it makes first to check the address
    // (strace shows it): 9. callbench's engine counts the same connections the kernel does.
    assert_eq!(cell("rest/auth/wrk+rust-actix")["runs"][0]["outside"]["connections_opened"], CONCURRENCY + 1);
    let own = &cell("rest/auth/callbench+rust-actix")["runs"][0];
    assert_eq!(own["outside"]["connections_opened"], own["connections_opened"], "{own:#}");
    assert_eq!(own["outside"]["span"], "window", "{own:#}");
    // What a tool cannot do here or at all is said, never silently skipped.
    let k6 = cell("rest/auth/k6+rust-actix");
    assert_eq!(k6["status"], "not-measured");
    assert!(k6["error"].as_str().unwrap().contains("k6 is not installed here"), "{k6:#}");
    let ghz_rest = cell("rest/auth/ghz+rust-actix");
    assert!(ghz_rest["error"].as_str().unwrap().starts_with("not applicable: ghz speaks gRPC only"), "{ghz_rest:#}");
    let h2load_grpc = cell("grpc/auth/h2load+rust-tonic");
    assert!(h2load_grpc["params"]["approximated"].to_string().contains("grpc-status"), "{h2load_grpc:#}");
    assert_eq!(cell("rest/auth/callbench+rust-actix")["runs"][0].get("peer"), None);
    // The servers' count files went with them.
    let me = format!("callbench-{pid}-answered-");
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&me))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A server that pauses: callbench's open-loop latency counts the calls queued behind each pause.
#[test]
fn a_stalling_server_shows_in_the_latency_counted_from_each_calls_intended_start() {
    let dir = TempDir::new("stalls");
    let suite = "name = 'stalls'\nrepetitions = 1\n[[experiment]]\nid = 'stalls'\ntitle = 'stalls'\n\
                 servers = ['rust-actix']\nworkloads = ['students']\nduration = '2s'\nrate = 500\nconcurrency = 50\n\
                 server_stall = '100ms every 500ms'\n";
    std::fs::write(dir.path("suite.toml"), suite).unwrap();
    let run = Running::command("run", &[&dir.str("suite.toml"), "--out", &dir.str("results"), "--no-build"])
        .finish(Duration::from_secs(300));
    assert_eq!(run.code, Some(0), "{}", run.all());
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("results/results.json")).unwrap()).unwrap();
    let cell = &results["cells"][0];
    assert_eq!(cell["params"]["server_stall"], "100ms every 500ms", "{cell:#}");
    // A fifth of the time paused: more than 1% of the calls wait behind a pause, at least half of it.
    let p99 = cell["summary"]["latency_p99_us"]["median"].as_f64().unwrap();
    assert!(p99 >= 50_000.0, "p99 {p99} µs: {cell:#}");
}
