//! End-to-end: an open-loop rate a real server cannot keep. A Python HTTP/1.1 server takes 20 ms
//! per call and writes its head and body apart, so Nagle and delayed ACK add about 40 ms more: at
//! most 50 calls/s, about 16 here. Loaded at 100 calls/s for 1 s, the report must give what the
//! server delivered (checked against the server's own clock), say first that the rate was not
//! kept, and end near the planned second, the calls it could not start counted, not made.

use crate::common;

use common::{load, num, validate, Guard, TempDir};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Prints its port, then the monotonic time (s) at which it finished each answer.
const SLOW_SERVER: &str = r#"
import http.server, time
class Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.02)
        self.send_response(200)
        self.send_header("content-length", "3")
        self.end_headers()        # the head: one write
        self.wfile.write(b"ok\n") # the body: another, held by Nagle until the head is ACKed
        print(time.monotonic(), flush=True)
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
    let mut lines = BufReader::new(server.child.stdout.take().unwrap()).lines();
    let port = lines.next().expect("the server's port").unwrap();
    let dir = TempDir::new("rate-not-kept");
    let json = dir.str("report.json");
    let url = format!("http://127.0.0.1:{}/", port.trim());
    // One run: the summary on stdout, the JSON report in a file.
    let run = load(&["--rate", "100", "-c", "1", "-z", "1s", "-o", "json", "--out", &json, &url]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate(&report);

    let (ok, taken, throughput) =
        (num(&report, "/calls/ok"), num(&report, "/duration_s"), num(&report, "/throughput_per_s"));
    let not_started = num(&report, "/rate/not_started");
    assert_eq!(num(&report, "/calls/errors"), 0.0, "{report:#}");
    assert!(ok >= 2.0, "{report:#}");
    assert_eq!(report["rate"]["kept"], false, "{report:#}");
    assert_eq!(ok + not_started, 100.0, "every planned call is made or counted as not started: {report:#}");
    assert!((throughput - ok / taken).abs() < 0.01 * throughput, "calls over the time they took: {report:#}");
    // It ends near its planned second: the last call started by 1.01 s and took one call's time.
    assert!(num(&report, "/planned_s") == 1.0 && taken < 2.0, "{report:#}");

    // What the server delivered, by its own clock: one line per answer, the report's ok of them.
    let times: Vec<f64> = lines.by_ref().take(ok as usize).map(|l| l.unwrap().trim().parse().unwrap()).collect();
    let delivered = (times.len() - 1) as f64 / (times[times.len() - 1] - times[0]);
    assert!(
        (throughput - delivered).abs() <= 0.2 * delivered,
        "reported {throughput:.1}/s, the server delivered {delivered:.1}/s: {report:#}"
    );
    assert!(throughput <= 52.0, "at least 20 ms a call, one at a time: {report:#}");

    // The summary says it first, with the counts.
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("Rate not kept: 100.0 calls/s requested, "), "{}", run.stdout);
    let planned = format!("{not_started} of the 100 calls planned for 1.00 s could not start by its end");
    assert!(
        first.contains(&format!("{throughput:.1} calls/s delivered")) && first.contains(&planned),
        "{}",
        run.stdout
    );
}
