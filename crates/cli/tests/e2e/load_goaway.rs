//! End-to-end: servers that end their connections on their own.
//! - A stock nginx with its default settings ends an HTTP/2 connection with GOAWAY after 1000
//!   requests (`keepalive_requests`): every call still succeeds, over h2c and over TLS, the calls
//!   the server had not processed are sent again, and both are counted apart from errors.
//! - grpc-go with a maximum connection age (as behind load balancers) does the same for gRPC.

use crate::common;

use common::nginx::{Nginx, Options};
use common::{load, load_json, num, Guard, TempDir};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn assert_goaways_are_not_errors(report: &serde_json::Value, calls: f64) {
    assert_eq!(num(report, "/calls/ok"), calls, "{report:#}");
    assert_eq!(num(report, "/calls/errors"), 0.0, "{report:#}");
    assert!(num(report, "/goaways") >= 1.0, "the server ended connections: {report:#}");
    assert!(num(report, "/connections_opened") >= 2.0, "{report:#}");
}

#[test]
fn stock_nginx_ending_http2_connections_after_1000_requests_costs_no_call() {
    let nginx = Nginx::start(&Options { tls: true, ..Options::default() });
    let h2c = load_json(&["--http2", "-n", "5000", "-c", "20", &format!("http://127.0.0.1:{}/ok", nginx.h2)]);
    assert_goaways_are_not_errors(&h2c, 5000.0);
    assert!(num(&h2c, "/goaways") >= 4.0, "5000 calls over connections of 1000: {h2c:#}");
    let tls = load_json(&[
        "--http2",
        "-k",
        "-n",
        "5000",
        "-c",
        "20",
        &format!("https://127.0.0.1:{}/ok", nginx.h2s.unwrap()),
    ]);
    assert_goaways_are_not_errors(&tls, 5000.0);
    assert_eq!(tls["tls"], true);
    // The text summary names them beside the connections, and shows no error line.
    let run = load(&["--http2", "-n", "2500", "-c", "20", &format!("http://127.0.0.1:{}/ok", nginx.h2)]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.contains("ended by the server (GOAWAY)"), "{}", run.stdout);
    assert!(!run.stdout.contains("Errors"), "{}", run.stdout);
}

#[test]
fn grpc_go_with_a_maximum_connection_age_costs_no_call() {
    let bin = std::path::Path::new(common::callbench()).parent().unwrap().join("../servers/go-grpc/server");
    let bin = common::installed(&bin.to_string_lossy());
    let dir = TempDir::new("goaway-grpc");
    let users = dir.str("users.json");
    let made = Command::new(common::callbench()).args(["gen-users", "-o", &users]).status().unwrap();
    assert!(made.success());
    let mut server = Guard::spawn(
        Command::new(bin)
            .args(["--port", "0", "--users", &users, "--max-connection-age", "300ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    // It announces its address on a line of its own.
    let mut line = String::new();
    BufReader::new(server.child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    let report = load_json(&["--workload", "students", "-c", "20", "-z", "2s", &format!("grpc://{addr}")]);
    assert_eq!(num(&report, "/calls/errors"), 0.0, "{report:#}");
    assert!(num(&report, "/goaways") >= 2.0, "connections older than 300 ms were ended: {report:#}");
    assert!(num(&report, "/connections_opened") >= 3.0, "{report:#}");
}
