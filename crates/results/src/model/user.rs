//! What results.json records of the user's own API and conditions: an endpoint callbench did not
//! start (`callbench run URL…`), and a `--threshold` judged on a cell.

use serde::{Deserialize, Serialize};

/// A user's endpoint, as the command line named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointRecord {
    /// The target as given: `http://127.0.0.1:8080/students`, `grpc://host:50051/pkg.Svc/Method`.
    pub url: String,
    /// What a call is: `GET /students`, `pkg.Svc/Method`.
    pub call: String,
    /// The processes whose CPU is the server's (`--server-pid`, with their process groups); empty:
    /// the server's CPU was not measured.
    pub server_pids: Vec<i32>,
    /// What the calls sent, when not the same request every call: `3 requests in turn from
    /// calls.ndjson`, `a template, filled in per call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// A pass/fail condition judged on a cell (`p99<200ms`, `errors<0.1%`, `calls_per_s>5000`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThresholdRecord {
    /// The condition as written.
    pub threshold: String,
    /// The measured value in the condition's unit (µs, percent, a count, calls/s): the median of
    /// the repetitions (errors: over all of them); null when the cell did not measure it.
    pub measured: Option<f64>,
    /// The measured value as the condition writes it, or why there is none.
    pub measured_text: String,
    pub met: bool,
}
