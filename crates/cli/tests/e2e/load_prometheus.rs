//! End-to-end: `callbench load --out-prometheus` into a stock Prometheus (remote-write receiver,
//! native histograms): the series arrive, and `histogram_quantile` over them agrees with
//! callbench's own percentiles within the native histogram's stated error; `--prometheus-text`
//! passes promtool's check; bad flags and a receiver that is not there.

use crate::common;

use common::prometheus::Prometheus;
use common::{load, load_fails, start, TempDir};
use serde_json::Value;
use std::process::Command;

/// Schema 8's bucket width over its lower bound (callbench_export::native::relative_error(8)).
const STATED_ERROR: f64 = 0.002711;

fn report(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn prometheus_reads_back_the_percentiles_callbench_measured() {
    let prometheus = Prometheus::start();
    let axum = start("rust-axum", &[]);
    let tonic = start("rust-tonic", &[]);
    let dir = TempDir::new("prometheus-load");
    for (name, target) in [("rest", format!("http://{}", axum.addr)), ("grpc", format!("grpc://{}", tonic.addr))] {
        let json = dir.str(&format!("{name}.json"));
        let text = dir.str(&format!("{name}.prom"));
        let label = format!("case={name}");
        let run = load(&[
            "-n",
            "20000",
            "-c",
            "4",
            "--workload",
            "students",
            "-o",
            "json",
            "--out",
            &json,
            "-q",
            "--out-prometheus",
            &prometheus.url(),
            "--prometheus-text",
            &text,
            "--prometheus-label",
            &label,
            &target,
        ]);
        assert_eq!(run.code, Some(0), "{}\n{}", run.all(), prometheus.log());
        let report = report(&json);
        let ok = report["calls"]["ok"].as_u64().unwrap();
        assert_eq!(ok, 20000, "{report:#}");

        let calls = prometheus.query(&format!("callbench_calls{{case=\"{name}\",outcome=\"ok\"}}"));
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].1, ok as f64);
        let labels = &calls[0].0;
        assert_eq!(labels["target"], target.as_str(), "{labels:#}");
        assert_eq!(labels["workload"], "students", "{labels:#}");
        let count = prometheus.query(&format!("histogram_count(callbench_latency_seconds{{case=\"{name}\"}})"));
        assert_eq!(count[0].1, ok as f64, "every call in the native histogram");
        for (q, key) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")] {
            let ours = report["latency_us"][key].as_f64().unwrap() * 1e-6;
            let expr = format!("histogram_quantile({q}, callbench_latency_seconds{{case=\"{name}\"}})");
            let theirs = prometheus.query(&expr);
            assert_eq!(theirs.len(), 1, "{expr}: {theirs:?}");
            let error = (theirs[0].1 - ours).abs() / ours;
            assert!(error <= STATED_ERROR, "{name} {key}: Prometheus {} s, callbench {ours} s ({error})", theirs[0].1);
        }
        let cpu = prometheus.query(&format!("callbench_client_cpu_seconds_per_call{{case=\"{name}\"}}"));
        let cpu_us = report["client_cpu_us_per_call"].as_f64().unwrap();
        assert!((cpu[0].1 * 1e6 - cpu_us).abs() <= cpu_us * 1e-9, "{cpu:?} vs {cpu_us}");

        // The text file: a stock checker takes it, and its histogram counts every call.
        let checked = Command::new(common::installed("/usr/bin/promtool"))
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&text).unwrap())
            .output()
            .unwrap();
        assert!(checked.status.success(), "promtool: {}", String::from_utf8_lossy(&checked.stdout));
        let exposition = std::fs::read_to_string(&text).unwrap();
        assert!(exposition.ends_with("# EOF\n"));
        let buckets: Vec<u64> = exposition
            .lines()
            .filter(|l| l.starts_with("callbench_latency_seconds_bucket{"))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "cumulative buckets: {buckets:?}");
        assert_eq!(buckets.last(), Some(&ok), "the +Inf bucket holds every call");
    }

    // The Grafana dashboard's queries: Prometheus parses every one, and the load panels show both loads.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(common::repo().join("crates/export/grafana/callbench.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 8);
    for panel in panels {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let mut concrete = expr.to_string();
            for variable in ["$suite", "$experiment", "$server", "$target"] {
                concrete = concrete.replace(variable, ".*");
            }
            assert!(!concrete.contains('$'), "a variable the test does not know: {expr}");
            let result = prometheus.query(&concrete);
            if panel["title"].as_str().unwrap().starts_with("callbench load") {
                assert_eq!(result.len(), 2, "{expr}: {result:?}");
            }
        }
    }
}

#[test]
fn bad_prometheus_flags_stop_before_any_call() {
    let axum = start("rust-axum", &[]);
    let target = format!("http://{}", axum.addr);
    for (flags, needle) in [
        (vec!["--out-prometheus", "ftp://127.0.0.1:9090"], "not an http:// or https:// URL"),
        (vec!["--out-prometheus", "http://127.0.0.1:notaport"], "not an http:// or https:// URL"),
        (vec!["--prometheus-text", "/nonexistent-dir/x.prom"], "cannot write /nonexistent-dir/x.prom"),
        (vec!["--prometheus-text", "/tmp/x.prom", "--prometheus-label", "9x=1"], "a label name is"),
        (vec!["--prometheus-text", "/tmp/x.prom", "--prometheus-label", "target=x"], "callbench sets this label"),
        (vec!["--prometheus-label", "a=1"], "--prometheus-label is for"),
    ] {
        let mut args = vec!["-n", "10", "--workload", "students"];
        args.extend(flags);
        args.push(&target);
        let run = load_fails(&args, needle);
        assert!(!run.stdout.contains("Calls"), "nothing ran: {}", run.all());
    }
}

#[test]
fn a_receiver_that_is_not_there_fails_the_run_after_its_report() {
    let axum = start("rust-axum", &[]);
    let dir = TempDir::new("prometheus-down");
    let json = dir.str("load.json");
    let nobody = format!("http://127.0.0.1:{}", common::free_port());
    let run = load(&[
        "-n",
        "200",
        "--workload",
        "students",
        "-o",
        "json",
        "--out",
        &json,
        "-q",
        "--out-prometheus",
        &nobody,
        &format!("http://{}", axum.addr),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(&run, "prometheus remote write: cannot connect to 127.0.0.1:");
    assert_eq!(report(&json)["calls"]["ok"], 200, "the report is written all the same");
}
