//! End-to-end: `callbench claims TOOL` reads a load tool's recorded output from stdin as bench/
//! gives it, prints one JSON object, and fails with one line on output it cannot read.

use crate::common;
use common::{assert_no_panic, assert_one_line, Run};
use serde_json::Value;
use std::process::{Command, Stdio};

/// `callbench claims ARGS` with `stdin` (a file of the checkout, or nothing).
fn claims(args: &[&str], stdin: Option<&str>) -> Run {
    let repo = common::repo();
    let mut cmd = Command::new(common::callbench());
    cmd.arg("claims").args(args).current_dir(&repo).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(match stdin {
        Some(file) => Stdio::from(std::fs::File::open(repo.join(file)).unwrap()),
        None => Stdio::null(),
    });
    let start = std::time::Instant::now();
    let out = cmd.output().expect("callbench runs");
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    };
    assert_no_panic(&run);
    run
}

#[test]
fn claims_reads_plain_wrk_from_stdin_and_says_what_it_cannot_read() {
    // wrk run plainly (`wrk -t1 -c8 -d2s URL`, as bench/engine.py runs it), 20% of its answers 503s.
    let run = claims(&["wrk"], Some("crates/peers/fixtures/wrk-plain-errors.txt"));
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert_eq!(run.stdout.lines().count(), 1, "one JSON object on one line:\n{}", run.all());
    let c: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.all()));
    assert_eq!((c["ok"].as_u64(), c["errors"].as_u64()), (Some(23838 - 4765), Some(4765)), "{c}");
    assert_eq!((c["seconds"].as_f64(), c["throughput"].as_f64()), (Some(2.09), Some(11381.73)), "{c}");
    assert_eq!((c["latency_us"]["mean"].as_f64(), c["latency_us"]["max"].as_f64()), (Some(4690.0), Some(115030.0)));
    assert_eq!(c["error_kinds"], serde_json::json!({"status": 4765}));
    // A report file beside stdout: h2load's per-request log under the name it writes.
    let run = claims(
        &[
            "h2load",
            "--stdout",
            "crates/peers/fixtures/h2load.txt",
            "--file",
            "crates/peers/fixtures/h2load-requests.log",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.all());
    let c: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(c["latency_us"]["p99"].as_f64().is_some(), "percentiles from its log: {c}");
    // wrk that could not connect prints no summary: one line, exit 1.
    let run = claims(&["wrk"], None);
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert_one_line(&run, "callbench: error: wrk's output cannot be read: no summary line");
    assert!(run.stdout.is_empty(), "{}", run.all());
}
