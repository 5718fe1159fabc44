//! End-to-end: `callbench load` over HTTP/1.1 (rust-actix) and HTTP/2 with prior knowledge (rust-axum):
//! workloads, raw requests, connection counts, gzip and status handling.

use crate::common;

use common::{assert_all_ok, load_json, num, start};
use serde_json::json;

fn url(server: &common::Server, path: &str) -> String {
    format!("http://{}{path}", server.addr)
}

/// Wire bytes include every header: more than the payload, which is more than nothing.
fn assert_wire_over_payload(report: &serde_json::Value) {
    let wire_received = num(report, "/wire_bytes_per_call/received");
    let payload_received = num(report, "/payload_bytes_per_call/received");
    assert!(wire_received > payload_received && payload_received > 0.0, "{report:#}");
    let wire_sent = num(report, "/wire_bytes_per_call/sent");
    let payload_sent = num(report, "/payload_bytes_per_call/sent");
    assert!(wire_sent > payload_sent, "{report:#}");
}

#[test]
fn http1_workloads_and_raw_requests_against_actix() {
    let actix = start("rust-actix", &[]);
    let base = url(&actix, "");

    let students = load_json(&["-n", "200", "-c", "4", "--workload", "students", "--check", &base]);
    assert_all_ok(&students, 200);
    assert_eq!(students["protocol"], "http/1.1");
    assert_eq!(students["call"], "GET /students");
    assert_eq!(num(&students, "/connections_opened"), 4.0, "HTTP/1.1: one connection per call in flight");
    assert_eq!(num(&students, "/settings/connections"), 4.0);
    assert_eq!(num(&students, "/payload_bytes_per_call/sent"), 0.0);
    assert_wire_over_payload(&students);

    let echo = load_json(&["-n", "100", "-c", "2", "--workload", "echo", "--payload-size", "5000", "--check", &base]);
    assert_all_ok(&echo, 100);
    let sent = num(&echo, "/payload_bytes_per_call/sent");
    assert!((4500.0..6000.0).contains(&sent), "echo of about 5000 bytes: {echo:#}");
    assert_eq!(num(&echo, "/payload_bytes_per_call/received"), sent, "echo answers what it got");
    assert_wire_over_payload(&echo);

    let body = r#"{"password":"password-7"}"#;
    let auth = load_json(&["-n", "50", "-c", "2", "-X", "PUT", "-d", body, &url(&actix, "/auth/7")]);
    assert_all_ok(&auth, 50);
    assert_eq!(auth["call"], "PUT /auth/7");
    assert_eq!(num(&auth, "/payload_bytes_per_call/sent"), body.len() as f64);
    assert_wire_over_payload(&auth);
    // The answer is {"hash": "<128 hex digits>"}.
    assert!(num(&auth, "/payload_bytes_per_call/received") >= 128.0, "{auth:#}");
}

#[test]
fn http1_new_connection_per_call_opens_one_per_call() {
    let actix = start("rust-actix", &[]);
    let report =
        load_json(&["-n", "60", "-c", "3", "--new-connection-per-call", "--workload", "students", &url(&actix, "")]);
    assert_all_ok(&report, 60);
    assert_eq!(num(&report, "/connections_opened"), 60.0, "{report:#}");
    assert_eq!(report["settings"]["new_connection_per_call"], true);
    assert!(num(&report, "/connect_us/max") > 0.0, "connect times measured: {report:#}");
    assert!(num(&report, "/connect_us/min") <= num(&report, "/connect_us/p50"));
}

#[test]
fn http1_gzip_sends_less_than_plain_json() {
    let actix = start("rust-actix", &[]);
    let echo = ["-n", "50", "-c", "2", "--workload", "echo", "--payload-size", "5000", "--check"];
    let plain = load_json(&[&echo[..], &[&url(&actix, "")]].concat());
    let gzip = load_json(&[&echo[..], &["--gzip", &url(&actix, "")]].concat());
    assert_all_ok(&plain, 50);
    assert_all_ok(&gzip, 50);
    assert_eq!(gzip["settings"]["gzip"], true);
    let (p, g) = (num(&plain, "/payload_bytes_per_call/sent"), num(&gzip, "/payload_bytes_per_call/sent"));
    assert!(g > 0.0 && g < p / 2.0, "gzip payload {g} B vs plain {p} B");
    assert!(num(&gzip, "/wire_bytes_per_call/sent") < num(&plain, "/wire_bytes_per_call/sent"));
}

#[test]
fn http_404_is_an_error_unless_expected() {
    let actix = start("rust-actix", &[]);
    let axum = start("rust-axum", &[]);
    for (server, h2) in [(&actix, false), (&axum, true)] {
        let target = url(server, "/no/such/route");
        let mut args = vec!["-n", "40", "-c", "2"];
        if h2 {
            args.push("--http2");
        }
        args.push(&target);
        let missing = load_json(&args);
        assert_eq!(common::ok(&missing), 0, "{missing:#}");
        assert_eq!(common::failed(&missing), 40, "{missing:#}");
        assert_eq!(missing["errors"], json!({"http_404": 40}), "{missing:#}");

        let mut expected = vec!["--expect-status", "404"];
        expected.extend(&args);
        let report = load_json(&expected);
        assert_all_ok(&report, 40);
    }
}

#[test]
fn http2_workloads_and_raw_requests_against_axum() {
    let axum = start("rust-axum", &[]);
    let base = url(&axum, "");

    let students =
        load_json(&["--http2", "--connections", "2", "--streams", "4", "-n", "200", "--workload", "students", &base]);
    assert_all_ok(&students, 200);
    assert_eq!(students["protocol"], "h2");
    assert_eq!(num(&students, "/settings/concurrency"), 8.0, "2 connections × 4 streams");
    assert_eq!(num(&students, "/settings/connections"), 2.0);
    assert_eq!(num(&students, "/connections_opened"), 2.0, "{students:#}");
    assert_wire_over_payload(&students);

    let echo = load_json(&[
        "--http2",
        "-n",
        "100",
        "-c",
        "4",
        "--workload",
        "echo",
        "--payload-size",
        "5000",
        "--check",
        &base,
    ]);
    assert_all_ok(&echo, 100);
    assert_eq!(num(&echo, "/connections_opened"), 1.0, "HTTP/2: one connection unless told");
    assert!(num(&echo, "/payload_bytes_per_call/sent") >= 4500.0, "{echo:#}");
    assert_wire_over_payload(&echo);

    let body = r#"{"password":"password-7"}"#;
    let auth = load_json(&["--http2", "-n", "50", "-c", "2", "-X", "PUT", "-d", body, &url(&axum, "/auth/7")]);
    assert_all_ok(&auth, 50);
    assert_eq!(num(&auth, "/payload_bytes_per_call/sent"), body.len() as f64);
    assert_wire_over_payload(&auth);
}

#[test]
fn http2_new_connection_per_call_opens_one_per_call() {
    let axum = start("rust-axum", &[]);
    let report = load_json(&[
        "--http2",
        "-n",
        "40",
        "-c",
        "4",
        "--new-connection-per-call",
        "--workload",
        "students",
        &url(&axum, ""),
    ]);
    assert_all_ok(&report, 40);
    assert_eq!(num(&report, "/connections_opened"), 40.0, "{report:#}");
    assert!(num(&report, "/connect_us/max") > 0.0, "{report:#}");
}
