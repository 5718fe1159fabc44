use super::*;
use callbench_results::model::RunMetrics;
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn measured(calls_errors: u64, cancelled: bool) -> Measured {
    let metrics = RunMetrics { calls_ok: 10, calls_errors, ..RunMetrics::default() };
    Measured { metrics, histogram: Histogram::new(3).unwrap(), window: Duration::from_secs(1), cancelled }
}

fn empty_cell() -> Cell {
    let suite = Suite::parse(SUITE).unwrap();
    let plans = plan::cells(&suite, &suite.experiments[0]).unwrap();
    cell::new_cell(&plans[0], None)
}

const SUITE: &str = r#"
name = "t"
repetitions = 2
[[experiment]]
id = "seq"
title = "sequential"
servers = ["inproc"]
workloads = ["auth", "students"]
calls = 200
warmup = "0s"
[[experiment]]
id = "many"
title = "many in flight"
servers = ["inproc"]
workloads = ["auth"]
concurrency = 8
[[experiment]]
id = "rate"
title = "a fixed rate"
servers = ["inproc"]
workloads = ["auth"]
rate = 100
"#;

#[test]
fn each_outcome_leaves_its_cell_in_the_status_it_means() {
    let mut cell = empty_cell();
    assert!(record_outcome(&mut cell, Ok(measured(0, false)), 0).is_some());
    assert_eq!((cell.status, cell.runs.len()), (CellStatus::Ok, 1));
    assert!(record_outcome(&mut cell, Ok(measured(2, false)), 1).is_some());
    assert_eq!((cell.status, cell.runs.len()), (CellStatus::Partial, 2), "failed calls keep the run");
    let mut cell = empty_cell();
    assert!(record_outcome(&mut cell, Ok(measured(0, true)), 2).is_none());
    assert_eq!(
        (cell.status, cell.error.as_deref()),
        (CellStatus::Interrupted, Some("interrupted during repetition 3"))
    );
    let mut cell = empty_cell();
    assert!(record_outcome(&mut cell, Err(CellError::ServerDied("exit status 1".into())), 0).is_none());
    assert_eq!((cell.status, cell.error.as_deref()), (CellStatus::ServerCrashed, Some("server died: exit status 1")));
    let mut cell = empty_cell();
    record_outcome(&mut cell, Err(CellError::Failed("cannot connect".into())), 0);
    assert_eq!((cell.status, cell.runs.len()), (CellStatus::Error, 0));
}

#[test]
fn the_headline_follows_the_load_unless_the_suite_names_one() {
    let suite = Suite::parse(SUITE).unwrap();
    let headlines: Vec<String> = suite.experiments.iter().map(|e| record(&suite, e).headline).collect();
    assert_eq!(headlines, ["latency_p50_us", "throughput_per_s", "latency_p99_us"]);
}

/// The rounds loop end to end on in-process cells (no server to start): every cell gets its
/// repetitions, interleaved, and results.json holds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_experiment_runs_its_rounds_into_results() {
    let repo = Repo::locate().unwrap();
    let dir = std::env::temp_dir().join(format!("callbench-experiment-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store::create(&dir).unwrap();
    let suite = Suite::parse(SUITE).unwrap();
    let o = Options {
        allow_remote: false,
        allow_cpu_idle: true,
        thresholds: Vec::new(),
        suite_text: SUITE.into(),
        suite_file: "t.toml".into(),
        command_line: vec![],
        client_cpus: vec![],
        server_cpus: vec![],
        repetitions: None,
        cancel: Arc::new(AtomicBool::new(false)),
        quiet: true,
        verified: Default::default(),
    };
    let environment = crate::environment::record(&repo, vec![], &o.client_cpus, &o.server_cpus);
    let mut results = crate::execute::new_results(&suite, &o, environment);
    let mut progress = Progress::new(&suite, None, true);
    run(&repo, &suite, &suite.experiments[0], &store, &o, &mut results, &mut progress).await.unwrap();
    assert_eq!(results.cells.len(), 2);
    for cell in &results.cells {
        assert_eq!((cell.status, cell.runs.len(), cell.transport.as_str()), (CellStatus::Ok, 2, "inproc"), "{cell:?}");
        assert!(cell.runs.iter().all(|r| r.calls_ok == 200));
    }
    assert_eq!(results.comparisons.len(), 0, "one server: nothing to compare");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(written["cells"].as_array().map(Vec::len), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_calls_read_by_kind_with_the_servers_words_for_the_first() {
    let m = RunMetrics {
        errors: [("grpc_3".to_string(), 30), ("timeout".to_string(), 2)].into_iter().collect(),
        first_failure: Some("grpc_3: ntimes must be in 1..1000".into()),
        ..RunMetrics::default()
    };
    assert_eq!(
        failed_calls(&m),
        "failed calls: grpc_3 (INVALID_ARGUMENT) ×30, timeout ×2; the first said grpc_3: ntimes must be in 1..1000"
    );
    let http = RunMetrics { errors: [("http_500".to_string(), 1)].into_iter().collect(), ..RunMetrics::default() };
    assert_eq!(failed_calls(&http), "failed calls: http_500 ×1");
}
