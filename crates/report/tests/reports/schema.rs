//! results.json follows schemas/results.schema.json and reads back as it was written.

use crate::common;

use callbench_results::model::{Results, METRICS};
use serde_json::Value;

fn schema() -> Value {
    let path = common::repo().join("schemas/results.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn errors(instance: &Value) -> Vec<String> {
    let schema = schema();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON schema");
    validator.iter_errors(instance).map(|e| format!("{e} at {}", e.instance_path)).collect()
}

#[test]
fn the_fixture_follows_the_schema() {
    let json = serde_json::to_value(common::fixture()).unwrap();
    let errors = errors(&json);
    assert!(errors.is_empty(), "results.json breaks the schema:\n{}", errors.join("\n"));
}

#[test]
fn a_partial_run_follows_the_schema() {
    let mut r = common::fixture();
    r.complete = false;
    r.interrupted = true;
    r.cells.truncate(3);
    r.cells[2].status = callbench_results::model::CellStatus::Interrupted;
    r.cells[2].spectrum.clear();
    r.comparisons.clear();
    r.environment.finished_at = None;
    r.environment.git_commit = None;
    r.environment.git_dirty = None;
    let errors = errors(&serde_json::to_value(&r).unwrap());
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn a_run_made_by_a_cluster_follows_the_schema() {
    use callbench_results::model::{ClusterRun, WorkerShare};
    let mut r = common::fixture();
    let share = |i: usize| WorkerShare {
        name: format!("worker {i} (10.0.0.{i})"),
        address: format!("10.0.0.{i}"),
        segment: format!("{}:{}", if i == 1 { "0" } else { "1/2" }, if i == 1 { "1/2" } else { "1" }),
        calls_ok: 300,
        calls_errors: 0,
        throughput_per_s: 150.0,
        client_cpu_us_per_call: 40.0,
        start_late_ms: Some(0.02),
        clock_uncertainty_ms: None,
    };
    r.cells[0].runs[0].cluster = Some(ClusterRun {
        ray: "10.0.0.9:6379".into(),
        workers: 2,
        start_skew_ms: 0.4,
        behind_schedule: vec![],
        per_worker: vec![share(1), share(2)],
        remade_for_skew: vec!["workers started 6.1 ms apart (limit 5 ms)".into()],
    });
    let json = serde_json::to_value(&r).unwrap();
    let errors = errors(&json);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let back: Results = serde_json::from_value(json).unwrap();
    assert_eq!(back.cells[0].runs[0].cluster, r.cells[0].runs[0].cluster);
}

#[test]
fn the_schema_rejects_what_serde_would_not_write() {
    let good = serde_json::to_value(common::fixture()).unwrap();
    let mut bad_status = good.clone();
    bad_status["cells"][0]["status"] = "crashed".into();
    assert!(!errors(&bad_status).is_empty());
    let mut missing = good.clone();
    missing["cells"][0].as_object_mut().unwrap().remove("noisy");
    assert!(!errors(&missing).is_empty());
    let mut unknown_metric = good.clone();
    unknown_metric["cells"][0]["summary"]["latency_p42_us"] = good["cells"][0]["summary"]["latency_p50_us"].clone();
    assert!(!errors(&unknown_metric).is_empty());
    let mut bad_pair = good;
    bad_pair["cells"][0]["spectrum"][0] = serde_json::json!([50.0]);
    assert!(!errors(&bad_pair).is_empty());
}

#[test]
fn the_schema_lists_exactly_the_model_metrics() {
    let schema = schema();
    let listed: Vec<&str> =
        schema["$defs"]["Metric"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let model: Vec<&str> = METRICS.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(listed, model, "the schema is made from model::METRICS (callbench_results::schema)");
}

#[test]
fn results_round_trip_through_serde() {
    let r = common::fixture();
    let text = serde_json::to_string_pretty(&r).unwrap();
    let back: Results = serde_json::from_str(&text).unwrap();
    assert_close(&serde_json::to_value(&back).unwrap(), &serde_json::to_value(&r).unwrap(), "");
}

/// Equal JSON, floats within a few ULPs: serde_json without its `float_roundtrip` feature may
/// read a float back one ULP off.
fn assert_close(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= 1e-12 * x.abs().max(y.abs()), "{at}: {x} != {y}");
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths differ");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                assert_close(x, y, &format!("{at}/{i}"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{at}: keys differ");
            for (k, v) in x {
                assert_close(v, &y[k], &format!("{at}/{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}
