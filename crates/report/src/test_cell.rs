//! A cell as the report's unit tests start from one: its id, experiment and repetitions, every
//! other field empty or ok, for each test to set what it checks.

use callbench_results::model::{Cell, CellStatus, RunMetrics};

pub fn cell(id: &str, experiment: &str, runs: Vec<RunMetrics>) -> Cell {
    Cell {
        id: id.into(),
        experiment: experiment.into(),
        server: "s".into(),
        workload: "auth".into(),
        transport: "rest-h1".into(),
        params: Default::default(),
        x: None,
        status: CellStatus::Ok,
        error: None,
        runs,
        summary: Default::default(),
        spectrum: vec![],
        pooled: vec![],
        bottleneck: String::new(),
        noisy: false,
        disturbed: None,
        reruns: 0,
        hdr_file: None,
        network: None,
        thresholds: Vec::new(),
    }
}
