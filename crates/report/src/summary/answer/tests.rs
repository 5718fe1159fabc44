use super::*;
use callbench_results::model::{Estimate, Latency, RunMetrics};

fn cell(experiment: &str, server: &str, transport: &str, p50s: &[f64]) -> Cell {
    let runs = p50s
        .iter()
        .map(|v| RunMetrics {
            throughput_per_s: 1e6 / v,
            latency_us: Some(Latency { p50: *v, p99: v * 2.0, ..Default::default() }),
            client_cpu_us_per_call: 1.0,
            ..Default::default()
        })
        .collect();
    let mut c = Cell {
        server: server.into(),
        transport: transport.into(),
        ..crate::test_cell::cell(&format!("{experiment}/auth/{server}"), experiment, runs)
    };
    callbench_results::analysis::summarise(&mut c, "latency_p50_us", 0.0, 1, 1);
    c
}

fn experiment(id: &str, answer: &str) -> Experiment {
    Experiment { answer: Some(answer.into()), ..crate::test_cell::experiment(id, "latency_p50_us") }
}

fn results(experiments: Vec<Experiment>, cells: Vec<Cell>) -> Results {
    let mut r = crate::test_cell::results(5, experiments, cells);
    let ids: Vec<String> = r.experiments.iter().map(|e| e.id.clone()).collect();
    for id in ids {
        let found = callbench_results::analysis::compare_experiment(&r, &id);
        r.comparisons.extend(found);
    }
    r
}

#[test]
fn the_answer_names_the_best_of_each_protocol_and_the_runs_own_verdict() {
    let r = results(
        vec![experiment("sequential", "One call at a time")],
        vec![
            cell("sequential", "rust-actix", "rest-h1", &[20.0, 20.5, 19.8, 20.2, 20.1]),
            cell("sequential", "rust-axum", "rest-h1", &[22.0, 22.5, 21.8, 22.2, 22.1]),
            cell("sequential", "rust-tonic", "grpc", &[26.0, 26.5, 25.8, 26.2, 26.1]),
            cell("sequential", "inproc", "inproc", &[0.8, 0.81, 0.79, 0.8, 0.8]),
        ],
    );
    let lines = lines(&r);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("On this machine"), "{}", lines[0]);
    let line = &lines[1];
    assert!(line.starts_with("One call at a time (auth, "), "{line}");
    assert!(line.contains("REST 20.1 µs (rust-actix)") && line.contains("gRPC 26.1 µs (rust-tonic)"), "{line}");
    assert!(line.contains("in-process") && line.contains("REST ahead"), "{line}");
    crate::doc::comparisons::summary_agrees(line).unwrap();
}

#[test]
fn a_tie_is_said_as_one_and_a_skipped_experiment_says_why() {
    let mut skipped = experiment("network", "Across a 10 ms round trip, with TLS");
    skipped.skipped =
        Some("not run: an emulated network needs root; run callbench as root (sudo) to include it".into());
    let r = results(
        vec![experiment("sequential", "One call at a time"), skipped],
        vec![
            cell("sequential", "rust-actix", "rest-h1", &[20.0, 20.5, 19.8, 20.2, 20.1]),
            cell("sequential", "rust-tonic", "grpc", &[20.1, 20.4, 19.9, 20.0, 20.2]),
        ],
    );
    let lines = lines(&r);
    assert!(lines[1].contains(NO_DIFFERENCE), "{}", lines[1]);
    assert_eq!(lines[2], "Across a 10 ms round trip, with TLS: not run: an emulated network needs root; run callbench as root (sudo) to include it.");
}

#[test]
fn across_a_link_the_answer_is_in_round_trips() {
    let mut kept =
        cell("network", "rust-actix+tls", "rest-h1+tls", &[10_300.0, 10_310.0, 10_290.0, 10_305.0, 10_300.0]);
    let mut cold =
        cell("network", "rust-actix+tls", "rest-h1+tls", &[30_600.0, 30_700.0, 30_650.0, 30_620.0, 30_640.0]);
    cold.id.push_str("/new_connection_per_call=true");
    cold.params.insert("new_connection_per_call".into(), serde_json::json!(true));
    for name in ["cold_tcp_connect_p50_us", "cold_tls_handshake_p50_us", "cold_rest_p50_us"] {
        cold.summary.insert(name.into(), Estimate { median: 10_200.0, lo: 10_100.0, hi: 10_300.0, n: 5 });
    }
    for c in [&mut kept, &mut cold] {
        c.network = Some(callbench_results::model::NetworkRecord {
            spec: "rtt=10ms".into(),
            rtt_us: 10_000.0,
            measured_rtt_us: 10_200.0,
            own_rtt_us: 40.0,
        });
    }
    let r = results(vec![experiment("network", "Across a 10 ms round trip, with TLS")], vec![kept, cold]);
    let lines = lines(&r);
    let line = &lines[1];
    assert!(line.contains("(auth, a measured round trip of 10.2 ms): REST (rust-actix+tls) 10.3 ms on a kept connection (1.0 round trip)"), "{line}");
    assert!(line.contains("30.6 ms with a new connection per call (3.0: TCP 1.0, TLS 1.0, request 1.0)"), "{line}");
}

#[test]
fn a_suite_that_marks_no_experiment_has_no_answer() {
    let mut e = experiment("sequential", "x");
    e.answer = None;
    let r = results(vec![e], vec![cell("sequential", "rust-actix", "rest-h1", &[20.0, 20.5, 19.8])]);
    assert!(lines(&r).is_empty());
}
