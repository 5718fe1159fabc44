//! The results.json record a run starts from: the suite as it was run and the machine it ran on,
//! with no cell yet.

use crate::options::Options;
use crate::suite::Suite;
use callbench_report::model::{Environment, Results, SuiteRecord, SCHEMA};

/// Results before the first experiment: nothing measured yet.
pub fn new_results(suite: &Suite, o: &Options, environment: Environment) -> Results {
    Results {
        schema: SCHEMA.into(),
        complete: false,
        interrupted: false,
        suite: SuiteRecord {
            name: suite.name.clone(),
            description: suite.description.clone(),
            file: o.suite_file.clone(),
            text: o.suite_text.clone(),
            repetitions: o.repetitions.unwrap_or(suite.repetitions),
            interval_floor: suite.interval_floor.unwrap_or(0.0),
        },
        environment,
        servers: Vec::new(),
        experiments: Vec::new(),
        cells: Vec::new(),
        comparisons: Vec::new(),
        steadiness: None,
        seeds: vec![],
    }
}
