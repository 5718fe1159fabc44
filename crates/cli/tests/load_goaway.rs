//! End-to-end: servers that end their connections on their own, and one that cannot keep up.
//! - A stock nginx with its default settings ends an HTTP/2 connection with GOAWAY after 1000
//!   requests (`keepalive_requests`): every call still succeeds, over h2c and over TLS, the calls
//!   the server had not processed are sent again, and both are counted apart from errors.
//! - grpc-go with a maximum connection age (as behind load balancers) does the same for gRPC.
//! - An HTTP/1.1 server that answers 50 calls/s, loaded open loop at 100 calls/s: the throughput
//!   is what it delivered, and the summary says first that the rate was not kept.

mod common;

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

/// An HTTP/1.1 server that takes 20 ms per call, one call at a time: 50 calls/s at most.
const SLOW_SERVER: &str = r#"
import http.server, time
class Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.02)
        self.send_response(200)
        self.send_header("content-length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Slow)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

#[test]
fn an_open_loop_rate_the_server_cannot_keep_reports_what_it_delivered_first() {
    let mut server =
        Guard::spawn(Command::new("python3").args(["-c", SLOW_SERVER]).stdout(Stdio::piped()).stderr(Stdio::null()));
    let mut port = String::new();
    BufReader::new(server.child.stdout.take().unwrap()).read_line(&mut port).unwrap();
    let url = format!("http://127.0.0.1:{}/", port.trim());
    let run = load(&["--rate", "100", "--connections", "1", "-c", "1", "-z", "1s", &url]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("Rate not kept: 100.0 calls/s requested"), "{}", run.stdout);
    let report = load_json(&["--rate", "100", "--connections", "1", "-c", "1", "-z", "1s", &url]);
    let (ok, taken) = (num(&report, "/calls/ok"), num(&report, "/duration_s"));
    let throughput = num(&report, "/throughput_per_s");
    assert_eq!(ok, 100.0, "{report:#}");
    assert!((throughput - ok / taken).abs() < 0.01 * throughput, "calls over the time they took: {report:#}");
    // At least 20 ms a call (more when its two writes meet Nagle and delayed ACK): at most 50/s
    // delivered, however fast the client scheduled them, and 100 calls took 2 s or more.
    assert!((1.0..=52.0).contains(&throughput), "{report:#}");
    assert!(taken >= 2.0 && num(&report, "/planned_s") < 1.1, "{report:#}");
}
