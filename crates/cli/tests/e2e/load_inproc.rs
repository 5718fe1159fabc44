//! End-to-end: `callbench load inproc:WORKLOAD`, the baseline with no boundary: no wire, the
//! workload's own messages as payload.

use crate::common;

use common::{assert_all_ok, load_fails, load_json, num};
use std::time::{Duration, Instant};

#[test]
fn in_process_workloads_have_payload_but_no_wire() {
    for (args, payload) in [
        (vec!["inproc:noop"], false),
        (vec!["inproc:life", "--ntimes", "5"], true),
        (vec!["inproc:auth"], true),
        (vec!["inproc:students", "-c", "2"], true),
        (vec!["inproc:echo", "--payload-size", "3000"], true),
    ] {
        let report = load_json(&[&["-n", "300"], &args[..]].concat());
        assert_all_ok(&report, 300);
        assert_eq!(report["protocol"], "inproc");
        assert_eq!(report["tls"], false);
        assert_eq!(report["workload"], args[0].trim_start_matches("inproc:"));
        assert_eq!(report["wire_bytes_per_call"], serde_json::json!({"sent": 0.0, "received": 0.0}), "{report:#}");
        let (sent, received) =
            (num(&report, "/payload_bytes_per_call/sent"), num(&report, "/payload_bytes_per_call/received"));
        if payload {
            assert!(received > 0.0, "{args:?}: {report:#}");
        } else {
            assert_eq!((sent, received), (0.0, 0.0), "noop moves nothing: {report:#}");
        }
        assert!(num(&report, "/latency_us/max") >= num(&report, "/latency_us/min"));
    }
    let life = load_json(&["-n", "50", "inproc:life", "--ntimes", "5"]);
    assert!(num(&life, "/payload_bytes_per_call/sent") > 0.0, "{life:#}");
    assert_eq!(num(&life, "/settings/concurrency"), 1.0, "in-process default: one caller");
    let echo = load_json(&["-n", "50", "inproc:echo", "--payload-size", "3000"]);
    assert!((2500.0..4000.0).contains(&num(&echo, "/payload_bytes_per_call/sent")), "{echo:#}");
}

#[test]
fn in_process_targets_refuse_network_flags() {
    for (flag, extra) in
        [("--gzip", None), ("--new-connection-per-call", None), ("-H", Some("x-a: 1")), ("-d", Some("{}"))]
    {
        let mut args = vec!["-n", "5", "inproc:noop", flag];
        args.extend(extra);
        load_fails(&args, flag);
    }
    load_fails(&["-n", "5", "inproc:nope"], "unknown workload");
    load_fails(&["-n", "5", "--workload", "life", "inproc:life"], "inproc:<workload>");
}

/// An in-process target has no connection: its settings say 0 connections, and its report should
/// not count one opened (nor connect times).
#[test]
fn in_process_targets_open_no_connection() {
    let report = load_json(&["-n", "50", "-c", "2", "inproc:noop"]);
    assert_eq!(num(&report, "/settings/connections"), 0.0);
    assert_eq!(num(&report, "/connections_opened"), 0.0, "{report:#}");
    assert!(report["connect_us"].is_null(), "{report:#}");
}

/// `--segment`: this machine's share of a split run, from the real CLI; a share that gets none of
/// the callers or a malformed segment is a one-line error before any call.
#[test]
fn a_segment_makes_its_share_of_the_calls() {
    let shares: Vec<f64> = ["0:1/3", "1/3:2/3", "2/3:1"]
        .iter()
        .map(|s| {
            let report = load_json(&["-n", "1001", "-c", "3", "--segment", s, "inproc:echo"]);
            assert_eq!(report["settings"]["segment"], *s, "{report:#}");
            assert_eq!(num(&report, "/settings/concurrency"), 1.0, "3 callers in thirds: {report:#}");
            num(&report, "/calls/ok")
        })
        .collect();
    assert_eq!(shares, vec![333.0, 334.0, 334.0]);
    load_fails(&["-n", "5", "--segment", "0:1/2", "inproc:noop"], "gets none of them");
    load_fails(&["-n", "5", "--segment", "1/2", "inproc:noop"], "a segment is FROM:TO");
    load_fails(&["-n", "5", "--segment-stripes", "4", "inproc:noop"], "goes with --segment");
}

/// `--keep-cpus-awake`: the kernel's idle-latency request is 0 while the load runs and what it was
/// again after, also when Ctrl-C ends the run; without permission to hold it, a one-line warning.
#[test]
fn keep_cpus_awake_holds_the_idle_request_only_while_the_load_runs() {
    let request = common::idle_request;
    let before = request();
    if !common::idle_request_writable() {
        let run = common::load(&["--keep-cpus-awake", "-n", "100", "-q", "inproc:noop"]);
        assert_eq!(run.code, Some(0), "{}", run.all());
        assert!(run.stderr.contains("idle CPUs could not be kept awake"), "{}", run.all());
        return;
    }
    let running = common::Running::start(&["--keep-cpus-awake", "-z", "60s", "-q", "inproc:noop"]);
    // Wait for the state the flag sets (the device has no notification: polled, bounded), then end
    // the run as a user would.
    let deadline = Instant::now() + Duration::from_secs(30);
    while request() != Some(0i32.to_ne_bytes().to_vec()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(request(), Some(0i32.to_ne_bytes().to_vec()), "never held while the load ran");
    running.guard.signal(libc::SIGINT);
    let run = running.finish(Duration::from_secs(10));
    assert_eq!(run.code, Some(130), "{}", run.all());
    assert_eq!(request(), before, "the hold outlived the run");
}
