//! End-to-end: `callbench load --threshold` for CI — each condition printed as met or crossed with
//! its measured value, kept in the JSON report, and a crossed one exits 99 (as k6's thresholds do);
//! a bad one is refused before any call.

use crate::common;

use common::{load, start};

#[test]
fn met_thresholds_exit_0_and_are_printed_with_their_values() {
    let actix = start("rust-actix", &[]);
    let target = format!("http://{}/students", actix.addr);
    let run = load(&[
        "-q",
        "-n",
        "200",
        "--threshold",
        "p99<60s",
        "--threshold",
        "errors<=0",
        "--threshold",
        "errors<1%",
        "--threshold",
        "calls_per_s>0",
        &target,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stderr.is_empty(), "{}", run.all());
    let lines: Vec<&str> = run.stdout.lines().skip_while(|l| !l.starts_with("Thresholds")).take(4).collect();
    assert!(lines[0].starts_with("Thresholds   p99<60s: met ("), "{}", run.stdout);
    assert_eq!(lines[1].trim(), "errors<=0: met (0)", "{}", run.stdout);
    assert_eq!(lines[2].trim(), "errors<1%: met (0%)", "{}", run.stdout);
    assert!(lines[3].trim().starts_with("calls_per_s>0: met ("), "{}", run.stdout);
}

#[test]
fn a_crossed_threshold_exits_99_and_names_it() {
    let actix = start("rust-actix", &[]);
    let target = format!("http://{}/students", actix.addr);
    // No answer over loopback HTTP comes back in a nanosecond, and no client makes 10⁹ calls a second.
    let run = load(&[
        "-o",
        "json",
        "-n",
        "100",
        "--threshold",
        "p50<1ns",
        "--threshold",
        "errors<1%",
        "--threshold",
        "calls_per_s>=1000000000",
        &target,
    ]);
    assert_eq!(run.code, Some(99), "{}", run.all());
    let stderr = run.stderr.trim();
    assert!(!stderr.contains('\n'), "one line: {}", run.all());
    assert!(stderr.starts_with("callbench: threshold crossed: p50<1ns ("), "{}", run.all());
    assert!(stderr.contains(", calls_per_s>=1000000000 (") && !stderr.contains("errors<1%"), "{}", run.all());
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()));
    common::validate(&report);
    let judged = report["thresholds"].as_array().unwrap_or_else(|| panic!("{report:#}"));
    let met: Vec<(&str, bool)> =
        judged.iter().map(|j| (j["threshold"].as_str().unwrap(), j["met"].as_bool().unwrap())).collect();
    assert_eq!(met, [("p50<1ns", false), ("errors<1%", true), ("calls_per_s>=1000000000", false)]);
    // The measured median, in µs, is the report's own.
    assert_eq!(judged[0]["measured"].as_f64(), report["latency_us"]["p50"].as_f64(), "{report:#}");
    assert_eq!(judged[1]["measured"].as_f64(), Some(0.0), "{report:#}");
}

#[test]
fn a_bad_threshold_is_refused_before_any_call() {
    for (threshold, needle) in [("p99<200", "has no unit"), ("latency<1ms", "unknown metric"), ("p99", "METRIC<VALUE")]
    {
        // Port 9 (discard) is closed here: a call made would fail as a connection refused, not this.
        let run = load(&["-n", "5", "--threshold", threshold, "http://127.0.0.1:9/"]);
        assert_eq!(run.code, Some(2), "{}", run.all());
        let stderr = run.stderr.trim();
        assert!(stderr.starts_with("callbench: error: ") && !stderr.contains('\n'), "{}", run.all());
        assert!(stderr.contains(threshold) && stderr.contains(needle), "{}", run.all());
    }
}
