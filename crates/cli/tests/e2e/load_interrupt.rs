//! End-to-end: Ctrl-C (SIGINT) or SIGTERM ends a `callbench load` early; what was measured is
//! still reported, marked `interrupted`, with the signal's exit code; callbench starts no process.

use crate::common;

use common::{children_of, num, start, Running, TempDir};
use std::time::Duration;

#[test]
fn ctrl_c_ends_the_run_and_keeps_what_was_measured() {
    let actix = start("rust-actix", &[]);
    let dir = TempDir::new("interrupt");
    let file = dir.str("report.json");
    let target = format!("http://{}", actix.addr);
    let running =
        Running::start(&["-z", "30s", "-c", "4", "-o", "json", "--out", &file, "--workload", "students", &target]);
    // Under way once its 4 connections are up (however long start-up took), then a measured second.
    assert!(
        common::wait_connected(common::port_of(&actix.addr), 4, Duration::from_secs(30)),
        "the run never connected"
    );
    std::thread::sleep(Duration::from_millis(1500)); // the part that runs, not a wait for a state
    assert!(running.guard.child.id() > 0);
    assert_eq!(children_of(running.guard.id()), Vec::<u32>::new(), "callbench load starts no process");
    running.guard.signal(libc::SIGINT);
    let run = running.finish(Duration::from_secs(3));
    assert_eq!(run.code, Some(130), "{}", run.all());
    assert!(run.stdout.contains("Latency") && run.stdout.contains("Interrupted"), "the summary:\n{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("the report file"))
        .unwrap_or_else(|e| panic!("{e}:\n{}", run.all()));
    common::validate(&report);
    assert_eq!(report["interrupted"], true);
    assert!(common::ok(&report) > 0, "{report:#}");
    assert_eq!(common::failed(&report), 0, "calls in flight finished: {report:#}");
    let measured = num(&report, "/duration_s");
    assert!((1.0..5.0).contains(&measured), "the window is what ran, not the 30 s asked: {report:#}");
    // The server is still there, answering.
    let after = common::load_json(&["-n", "5", "-c", "1", "--workload", "students", &target]);
    common::assert_all_ok(&after, 5);
}

#[test]
fn sigterm_ends_an_open_loop_run_with_its_rate_intact() {
    let actix = start("rust-actix", &[]);
    let running = Running::start(&[
        "--rate",
        "500",
        "-z",
        "30s",
        "-c",
        "8",
        "-o",
        "json",
        "--workload",
        "students",
        &format!("http://{}", actix.addr),
    ]);
    assert!(
        common::wait_connected(common::port_of(&actix.addr), 1, Duration::from_secs(30)),
        "the run never connected"
    );
    std::thread::sleep(Duration::from_millis(1200)); // the part that runs, not a wait for a state
    running.guard.signal(libc::SIGTERM);
    let run = running.finish(Duration::from_secs(3));
    assert_eq!(run.code, Some(143), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.all()));
    common::validate(&report);
    assert_eq!(report["interrupted"], true);
    // Over the part that ran, the rate was kept.
    let achieved = num(&report, "/rate/achieved");
    assert!((450.0..550.0).contains(&achieved), "achieved {achieved}/s: {report:#}");
    assert!(common::ok(&report) > 300, "{report:#}");
}

#[test]
fn ctrl_c_cuts_a_rate_shape_short() {
    let actix = start("rust-actix", &[]);
    let running = Running::start(&[
        "--rate-shape",
        "200@1s,400@20s",
        "-c",
        "8",
        "-o",
        "json",
        "--workload",
        "students",
        &format!("http://{}", actix.addr),
    ]);
    assert!(
        common::wait_connected(common::port_of(&actix.addr), 1, Duration::from_secs(30)),
        "the run never connected"
    );
    std::thread::sleep(Duration::from_millis(2000)); // the part that runs, not a wait for a state
    running.guard.signal(libc::SIGINT);
    let run = running.finish(Duration::from_secs(3));
    assert_eq!(run.code, Some(130), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.all()));
    common::validate(&report);
    assert_eq!(report["interrupted"], true);
    let segments = report["segments"].as_array().expect("segments");
    assert_eq!(segments.len(), 2);
    // The second segment ran about 1 s of its 20 at 400/s: measured over what ran.
    let achieved = num(&segments[1], "/achieved_per_s");
    assert!((340.0..460.0).contains(&achieved), "{report:#}");
    assert!((150.0..500.0).contains(&num(&segments[1], "/calls_ok")), "{report:#}");
}
