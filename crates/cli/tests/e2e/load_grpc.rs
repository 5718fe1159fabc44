//! End-to-end: `callbench load` over gRPC against rust-tonic: the method described by reflection,
//! by .proto files and by a protoset; workloads, metadata, gzip, streams and status codes.

use crate::common;

use common::{assert_all_ok, installed, load_fails, load_json, num, start, TempDir};
use serde_json::json;
use std::process::Command;

/// A blinker: after 2 generations it is back where it started.
const BLINKER: &str = r#"{"ntimes": 2, "board": [{"x": "1", "y": "0"}, {"x": 1, "y": 1}, {"x": 1, "y": 2}]}"#;
const BLINKER_BOARD: &str = r#"{"board": [{"x": 1, "y": 0}, {"x": 1, "y": 1}, {"x": 1, "y": 2}]}"#;

#[test]
fn the_method_is_found_by_reflection_proto_and_protoset() {
    let tonic = start("rust-tonic", &[]);
    let target = format!("grpc://{}/callbench.v1.Life/Step", tonic.addr);
    let dir = TempDir::new("protoset");
    let protoset = dir.str("life.protoset");
    let grpcurl = installed("~/go/bin/grpcurl");
    let made = Command::new(grpcurl)
        .args(["-plaintext", "-protoset-out", &protoset, &tonic.addr, "describe", "callbench.v1.Life"])
        .output()
        .expect("run grpcurl");
    assert!(made.status.success(), "grpcurl -protoset-out: {}", String::from_utf8_lossy(&made.stderr));

    let call = ["-n", "50", "-c", "2", "-d", BLINKER, "--expect-body", BLINKER_BOARD];
    let by_reflection = load_json(&[&call[..], &[&target]].concat());
    let by_proto = load_json(
        &[&call[..], &["--proto", "contract/proto/callbench/v1/life.proto", "-I", "contract/proto", &target]].concat(),
    );
    let by_protoset = load_json(&[&call[..], &["--protoset", &protoset, &target]].concat());
    for report in [&by_reflection, &by_proto, &by_protoset] {
        assert_all_ok(report, 50);
        assert_eq!(report["protocol"], "grpc");
        assert_eq!(report["call"], "callbench.v1.Life/Step");
        // The same message whatever described it.
        assert_eq!(report["payload_bytes_per_call"], by_reflection["payload_bytes_per_call"]);
        assert!(num(report, "/wire_bytes_per_call/sent") > num(report, "/payload_bytes_per_call/sent"));
        assert!(num(report, "/payload_bytes_per_call/received") > 0.0);
    }

    // A board that is not the answer fails every call as a validation error.
    let wrong = load_json(&["-n", "20", "-d", BLINKER, "--expect-body", r#"{"board": []}"#, &target]);
    assert_eq!(wrong["errors"], json!({"validation": 20}), "{wrong:#}");
}

#[test]
fn workloads_metadata_gzip_and_streams() {
    let tonic = start("rust-tonic", &[]);
    let base = format!("grpc://{}", tonic.addr);

    let auth = load_json(&["-n", "100", "-c", "4", "--workload", "auth", "--check", &base]);
    assert_all_ok(&auth, 100);
    assert_eq!(auth["call"], "callbench.v1.Auth/Test");
    let traced = load_json(&["-n", "100", "-c", "4", "--workload", "auth", "--check", "-H", "x-trace: 1", &base]);
    assert_all_ok(&traced, 100);
    assert!(
        num(&traced, "/wire_bytes_per_call/sent") > num(&auth, "/wire_bytes_per_call/sent"),
        "the metadata is on the wire"
    );

    let echo = ["-n", "50", "-c", "2", "--workload", "echo", "--payload-size", "5000", "--check"];
    let plain = load_json(&[&echo[..], &[&base]].concat());
    let gzip = load_json(&[&echo[..], &["--gzip", &base]].concat());
    assert_all_ok(&plain, 50);
    assert_all_ok(&gzip, 50);
    let (p, g) = (num(&plain, "/payload_bytes_per_call/sent"), num(&gzip, "/payload_bytes_per_call/sent"));
    assert!(g > 0.0 && g < p / 2.0, "gzip message {g} B vs plain {p} B");

    let streams = load_json(&["-n", "200", "--connections", "2", "--streams", "4", "--workload", "students", &base]);
    assert_all_ok(&streams, 200);
    assert_eq!(num(&streams, "/connections_opened"), 2.0, "{streams:#}");
    assert_eq!(num(&streams, "/settings/concurrency"), 8.0);
}

#[test]
fn an_unknown_method_is_one_line_listing_what_exists() {
    let tonic = start("rust-tonic", &[]);
    let run = load_fails(&["-n", "5", "-d", "{}", &format!("grpc://{}/callbench.v1.Life/Stepp", tonic.addr)], "Stepp");
    assert!(run.stderr.contains("Setup") && run.stderr.contains("Step"), "{}", run.all());
    let run = load_fails(
        &["-n", "5", "-d", "{}", &format!("grpc://{}/callbench.v1.Lifx/Step", tonic.addr)],
        "callbench.v1.Life",
    );
    assert!(run.stderr.contains("callbench.v1.Auth"), "{}", run.all());
    // The same with a .proto file that does not have it.
    let run = load_fails(
        &[
            "-n",
            "5",
            "--proto",
            "contract/proto/callbench/v1/life.proto",
            "-I",
            "contract/proto",
            &format!("grpc://{}/callbench.v1.Life/Nope", tonic.addr),
        ],
        "Nope",
    );
    assert!(run.stderr.contains("Step"), "{}", run.all());
    // A request that is not the method's input message.
    load_fails(
        &["-n", "5", "-d", r#"{"no_such_field": 1}"#, &format!("grpc://{}/callbench.v1.Life/Step", tonic.addr)],
        "no_such_field",
    );
}

#[test]
fn an_invalid_request_counts_by_grpc_status() {
    let tonic = start("rust-tonic", &[]);
    let target = format!("grpc://{}/callbench.v1.Life/Step", tonic.addr);
    let report = load_json(&["-n", "30", "-c", "3", "-d", r#"{"ntimes": 0, "board": [{"x": 1, "y": 1}]}"#, &target]);
    assert_eq!(common::ok(&report), 0, "{report:#}");
    assert_eq!(report["errors"], json!({"grpc_3": 30}), "INVALID_ARGUMENT: {report:#}");
    // The server's own words for the first of them (its grpc-message).
    let said = report["first_failure"].as_str().unwrap_or_default();
    assert!(said.starts_with("grpc_3: ") && said.contains("ntimes"), "{report:#}");
    let report =
        load_json(&["-n", "30", "--workload", "auth", "--user-id", "20000", &format!("grpc://{}", tonic.addr)]);
    assert_eq!(report["errors"], json!({"grpc_5": 30}), "NOT_FOUND: {report:#}");
    assert!(report["first_failure"].as_str().is_some_and(|f| f.starts_with("grpc_5: ")), "{report:#}");
}

/// A bidi-streaming method the server did not write for callbench (tonic's own reflection
/// service), its messages from a file of one JSON message per line: in a burst and ping-pong,
/// three messages each way per call, the stream's figures in the JSON output.
#[test]
fn a_stock_bidi_stream_in_a_burst_and_ping_pong() {
    let tonic = start("rust-tonic", &[]);
    let dir = TempDir::new("bidi");
    let messages = dir.path("requests.ndjson");
    let lines =
        "{\"listServices\": \"\"}\n{\"fileContainingSymbol\": \"callbench.v1.Auth\"}\n{\"listServices\": \"\"}\n";
    std::fs::write(&messages, lines).unwrap();
    let data = format!("@{}", messages.display());
    let target = format!("grpc://{}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", tonic.addr);
    for pace in ["burst", "ping-pong"] {
        let run = load_json(&["-n", "40", "-c", "2", "-d", &data, "--stream-pace", pace, &target]);
        assert_all_ok(&run, 40);
        assert_eq!(num(&run, "/stream/calls"), 40.0, "{pace}: {run:#}");
        assert_eq!(num(&run, "/stream/messages_per_call/sent"), 3.0, "{pace}");
        assert_eq!(num(&run, "/stream/messages_per_call/received"), 3.0, "{pace}");
        assert!(num(&run, "/stream/first_answer_us/p50") > 0.0, "{pace}");
        assert!(num(&run, "/stream/first_answer_us/p50") <= num(&run, "/latency_us/p99"), "{pace}");
    }
    // A unary method cannot be paced, and takes one message only.
    load_fails(
        &[
            "-n",
            "1",
            "--stream-pace",
            "ping-pong",
            "-d",
            "{}",
            &format!("grpc://{}/callbench.v1.Students/List", tonic.addr),
        ],
        "ping-pong pacing is for bidi-streaming methods",
    );
}

/// The contract's streaming workloads, checked: an upload of 20 records answered once, a
/// conversation of 20 messages each way in a burst and in ping-pong, a download of 20 records; and
/// their REST counterparts on rust-axum, the NDJSON upload and download and the batched POST.
#[test]
fn the_records_workloads_stream_over_grpc_and_rest() {
    let tonic = start("rust-tonic", &[]);
    let grpc = format!("grpc://{}", tonic.addr);
    let records = ["--records", "20", "--check", "-n", "30", "-c", "3"];
    for (workload, pace, sent, received) in [
        ("records-upload", "burst", 20.0, 1.0),
        ("records-converse", "burst", 20.0, 20.0),
        ("records-converse", "ping-pong", 20.0, 20.0),
        ("records-download", "burst", 1.0, 20.0),
    ] {
        let paced: &[&str] = if pace == "ping-pong" { &["--stream-pace", "ping-pong"] } else { &[] };
        let run = load_json(&[&records[..], paced, &["--workload", workload, &grpc]].concat());
        assert_all_ok(&run, 30);
        assert_eq!(num(&run, "/stream/messages_per_call/sent"), sent, "{workload} {pace}: {run:#}");
        assert_eq!(num(&run, "/stream/messages_per_call/received"), received, "{workload} {pace}: {run:#}");
    }
    let axum = start("rust-axum", &[]);
    for workload in ["records-upload", "records-batch", "records-download"] {
        let run = load_json(&[&records[..], &["--workload", workload, &format!("http://{}", axum.addr)]].concat());
        assert_all_ok(&run, 30);
    }
    load_fails(
        &["-n", "1", "--workload", "records-converse", &format!("http://{}", axum.addr)],
        "REST has no counterpart of Records/Converse",
    );
}
