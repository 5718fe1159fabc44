//! End-to-end: `callbench run` across an emulated 40 ms link (root needed, as for every link).
//! A cold HTTP/1.1 call over TLS 1.3 to a real server costs about three round trips — TCP
//! connect, TLS handshake, request — each phase measured by the engine, not computed; a call on a
//! kept connection about one; held to TLS 1.2, the handshake takes two. The report explains it in round trips, and the run leaves no
//! namespace or interface behind.

use crate::common;

use common::{Running, TempDir};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const SUITE: &str = r#"
name = "e2e-network"
repetitions = 2
[defaults]
calls = 12
warmup = "0s"
concurrency = 1
network = { rtt = "40ms" }

[[experiment]]
id = "cold"
title = "Cold TLS calls"
servers = ["rust-actix+tls"]
workloads = ["auth"]
new_connection_per_call = true

[[experiment]]
id = "tls12"
title = "Cold calls held to TLS 1.2"
servers = ["rust-actix+tls"]
workloads = ["auth"]
new_connection_per_call = true
tls_version = "1.2"

[[experiment]]
id = "warm"
title = "Calls on a kept TLS connection"
servers = ["rust-actix+tls"]
workloads = ["auth"]
"#;

const RTT_US: f64 = 40_000.0;

fn median(cell: &Value, metric: &str) -> f64 {
    cell["summary"][metric]["median"].as_f64().unwrap_or_else(|| panic!("no {metric} in {cell:#}"))
}

/// callbench's namespaces of the run with this pid (what `ip netns list` shows of it).
fn namespaces_of(pid: u32) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/run/netns") else { return vec![] };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&format!("callbench-{pid}.")))
        .collect()
}

#[test]
fn a_cold_tls_call_costs_three_round_trips_and_a_warm_one_one() {
    let dir = TempDir::new("run-network");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let out = dir.str("results");
    let running = Running::command("run", &[&dir.str("suite.toml"), "--out", &out, "--no-build"]);
    let pid = running.guard.id();
    let run = running.finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(namespaces_of(pid).is_empty(), "left behind: {:?}", namespaces_of(pid));
    let links = common::run_cmd(std::process::Command::new("ip").args(["-o", "link"]));
    assert!(!links.stdout.contains("cb-link"), "a link device in the root namespace: {}", links.stdout);

    let text = std::fs::read_to_string(dir.path("results/results.json")).unwrap();
    let results: Value = serde_json::from_str(&text).unwrap();
    common::validate_results(&results);
    let cells = results["cells"].as_array().unwrap();
    let cell = |id: &str| cells.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no {id}: {cells:#?}"));
    let (cold, warm) = (cell("cold/auth/rust-actix+tls"), cell("warm/auth/rust-actix+tls"));
    for c in [cold, warm] {
        assert_eq!(c["status"], "ok", "{c:#}");
        let network = &c["network"];
        assert_eq!(network["rtt_us"], RTT_US, "{c:#}");
        // The round trip measured across the link before the run: the delay plus the link's own cost.
        let measured = network["measured_rtt_us"].as_f64().unwrap();
        assert!((measured - RTT_US).abs() <= (0.03 * RTT_US).max(150.0) + network["own_rtt_us"].as_f64().unwrap());
        assert!(c["runs"][0]["link"]["packets"].as_u64().unwrap() > 0, "{c:#}");
    }
    // Each phase of a cold call is one round trip: SYN / SYN-ACK; the TLS 1.3 flight; the request.
    let round_trips = |us: f64| us / RTT_US;
    for phase in ["cold_tcp_connect_p50_us", "cold_tls_handshake_p50_us", "cold_rest_p50_us"] {
        let n = round_trips(median(cold, phase));
        assert!((0.95..1.25).contains(&n), "{phase}: {n:.2} round trips: {cold:#}");
    }
    let cold_calls = round_trips(median(cold, "latency_p50_us"));
    assert!((2.9..3.5).contains(&cold_calls), "a cold call: {cold_calls:.2} round trips");
    // TLS 1.2's handshake takes two round trips before the request can go.
    let tls12 = cell("tls12/auth/rust-actix+tls");
    assert_eq!(tls12["params"]["tls_version"], "1.2", "{tls12:#}");
    let handshake = round_trips(median(tls12, "cold_tls_handshake_p50_us"));
    assert!((1.95..2.3).contains(&handshake), "a TLS 1.2 handshake: {handshake:.2} round trips: {tls12:#}");
    let warm_calls = round_trips(median(warm, "latency_p50_us"));
    assert!((0.95..1.25).contains(&warm_calls), "a kept connection's call: {warm_calls:.2} round trips");

    // The report says it in round trips, in words and as a stacked chart.
    let md = std::fs::read_to_string(dir.path("results/report.md")).unwrap();
    assert!(md.contains("connection set-up and round trips"), "{md}");
    // Three experiments with the section, the phases explained once.
    assert_eq!(md.matches("A cold call opens its own connection").count(), 1, "{md}");
    assert_eq!(md.matches("as explained under “Cold TLS calls: connection set-up").count(), 2, "{md}");
    assert!(md.contains("round trips of") && md.contains("TLS handshake 1."), "{md}");
    let html = std::fs::read_to_string(Path::new(&out).join("report.html")).unwrap();
    assert!(html.contains(r#"data-kind="setup""#) && html.contains(r#"data-phase="TLS handshake""#));
}
