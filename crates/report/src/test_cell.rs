//! A cell, an experiment and a run's results as the report's unit tests start from them: what
//! each test names, every other field empty or ok, for each test to set what it checks.

use callbench_results::model::{Cell, CellStatus, Experiment, Results, RunMetrics, SuiteRecord, SCHEMA};

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

pub fn experiment(id: &str, headline: &str) -> Experiment {
    Experiment {
        id: id.into(),
        title: id.into(),
        description: String::new(),
        seeds: vec![],
        sweep: None,
        headline: headline.into(),
        references: vec![],
        answer: None,
        skipped: None,
        cpus: None,
    }
}

/// A complete run of suite `t` (`repetitions` each) with these experiments and cells, nothing
/// compared yet.
pub fn results(repetitions: usize, experiments: Vec<Experiment>, cells: Vec<Cell>) -> Results {
    Results {
        schema: SCHEMA.into(),
        complete: true,
        interrupted: false,
        suite: SuiteRecord {
            name: "t".into(),
            description: String::new(),
            file: "t.toml".into(),
            text: String::new(),
            repetitions,
            interval_floor: 0.0,
        },
        environment: Default::default(),
        servers: vec![],
        experiments,
        cells,
        comparisons: vec![],
        steadiness: None,
        seeds: vec![],
    }
}
