//! `results.json`: what `callbench run` measured, cell by cell, with everything needed to
//! reproduce it. Written as cells finish (an interrupted run leaves a valid partial file) and read
//! back by `callbench report` and `callbench compare`. Schema: `schemas/results.schema.json`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod environment;
mod run;
mod steadiness;
mod user;
pub use environment::Environment;
pub use run::{
    ClusterRun, ColdCalls, Interference, Latency, LinkUse, OutsideCounts, PeerRun, QuicUse, RunMetrics, WorkerShare,
};
pub use steadiness::{CpuSteadiness, IdleHold, Steadiness, Wakeup};
pub use user::{EndpointRecord, ThresholdRecord};

pub const SCHEMA: &str = "callbench-results/1";

/// What `callbench run` writes to results.json (crates/results/src/model.rs): the suite as it was
/// run, the reproducibility record, the servers, the experiments with their seed-article
/// references, one cell per measured configuration with its repetitions and their summary (median
/// and 95% interval per metric), and the comparisons between cells. Latencies are in microseconds.
/// Written as cells finish, so an interrupted run leaves a valid file with `complete` false.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Results {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// False while the run goes on, and in a run that was interrupted or failed.
    pub complete: bool,
    /// Set when Ctrl-C / SIGTERM ended the run: the cells measured so far are valid.
    pub interrupted: bool,
    pub suite: SuiteRecord,
    pub environment: Environment,
    pub servers: Vec<ServerRecord>,
    pub experiments: Vec<Experiment>,
    pub cells: Vec<Cell>,
    /// Ratios between cells of the same experiment (filled when an experiment's cells are done).
    pub comparisons: Vec<Comparison>,
    /// The machine's steadiness, probed before the suite (None in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadiness: Option<Steadiness>,
    /// Each seed article's figure beside its committed reproduction (`reproductions/seeds.toml`),
    /// read when the run starts: the table that follows the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<SeedRow>,
}

/// One row of the seed table: what an article reported, what its reproduction measured under
/// the article's conditions (figures read from the committed results), why they differ, and the
/// command that reproduces it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeedRow {
    pub seed: String,
    /// What was measured, in words.
    pub what: String,
    pub article: String,
    /// The reproduction's figure, read from its committed results.
    pub here: String,
    pub why: String,
    /// The command that reproduces it.
    pub command: String,
}

/// The suite as it was run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuiteRecord {
    pub name: String,
    pub description: String,
    /// Path of the suite file as given (or `built-in default`).
    pub file: String,
    /// The suite file's text, verbatim.
    pub text: String,
    pub repetitions: usize,
    /// Every timing interval is widened to at least ± this share of its median: the spread of a
    /// fixed CPU loop on the pinned CPUs, measured by the steadiness probe before the suite (a
    /// median cannot be known better than the same work varies on the same core), unless the
    /// suite sets `interval_floor`. Files written before it existed read as 0.
    #[serde(default)]
    pub interval_floor: f64,
}

/// A server the suite used and what happened to it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerRecord {
    /// `rust-actix`, or `inproc` for the in-process baseline.
    pub name: String,
    pub language: String,
    pub framework: String,
    /// `rest`, `grpc` or `inproc`.
    pub protocol: String,
    /// Runtime, framework and library versions.
    pub versions: BTreeMap<String, String>,
    /// Result of `verify` before measuring (None: not verified, e.g. in-process).
    pub verify: Option<VerifyRecord>,
    /// Problems met while running it: failed start, failed verify, crash mid-suite...
    pub failures: Vec<String>,
    /// What a reader of its figures should know (the manifest's `note`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// A user's endpoint (`callbench run URL…`): not started by callbench, not verified against the
    /// contract (a call succeeds on its status), its CPU measured only through the pids given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointRecord>,
}

/// Result of `callbench verify` before measuring.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyRecord {
    pub passed: usize,
    pub failed: usize,
    /// The names and reasons of the failed vectors.
    pub failures: Vec<String>,
    /// Bad-input vectors the server's manifest declares it cannot answer as the contract says,
    /// with the reason and what it answered (not counted as passed or failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<String>,
}

/// A group of cells that answer one question (one table and chart in the report).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Experiment {
    pub id: String,
    pub title: String,
    pub description: String,
    /// Seed articles this experiment reproduces (`000`, `002`...).
    pub seeds: Vec<String>,
    /// The swept parameter when the cells vary along one (`payload_size`, `connections`, `rate`,
    /// `ntimes`, `calls`...), so charts put it on the x axis.
    pub sweep: Option<String>,
    /// The metric that answers the experiment's question (a key of [`Cell::summary`]):
    /// `latency_p50_us` for sequential latency, `throughput_per_s` for closed loop...
    pub headline: String,
    /// What the seed article reported, beside what callbench measured here.
    pub references: Vec<Reference>,
    /// The words that open this experiment's line of the answer, when it answers the suite's
    /// question (`One call at a time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Why the experiment was not run (it needs root and the run had none), and how to run it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The CPUs its client and its servers ran on, when not the run's (the suite's `swap_cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<SideCpus>,
}

/// Where an experiment's two sides ran: the client's CPUs and the servers'.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SideCpus {
    pub client: Vec<usize>,
    pub server: Vec<usize>,
}

/// One figure of a seed article, and the cell/metric of this run that measures the same thing.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reference {
    pub seed: String,
    /// What the article measured, in words.
    pub what: String,
    /// The article's figure as it wrote it (`182 ms`, `~45k rps`).
    pub article: String,
    /// The cell whose measurement corresponds (None: nothing here measures it).
    pub cell: Option<String>,
    /// The metric of that cell (a key of [`Cell::summary`]).
    pub metric: Option<String>,
    /// Why the figures differ in kind (network, hardware...), when they do.
    pub note: String,
}

/// One measured configuration: a server, a workload, load settings; K repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    /// Unique in the run, file-name safe: `closed-50/students/rust-actix`.
    pub id: String,
    pub experiment: String,
    pub server: String,
    pub workload: String,
    /// `rest-h1`, `rest-h2`, `grpc` or `inproc` (with `+tls` when over TLS).
    pub transport: String,
    /// The load and server settings, as a user would write them (concurrency, rate, connections...).
    pub params: BTreeMap<String, serde_json::Value>,
    /// The swept parameter's value, when the experiment has one.
    pub x: Option<f64>,
    pub status: CellStatus,
    /// Why the cell failed or is incomplete.
    pub error: Option<String>,
    pub runs: Vec<RunMetrics>,
    /// Per metric: the median of the runs and its 95% interval.
    pub summary: BTreeMap<String, Estimate>,
    /// Latency percentile spectrum of all runs merged: (percentile 0–100, µs), for the log-scale chart.
    pub spectrum: Vec<(f64, f64)>,
    /// Metrics whose summary is of all repetitions' calls merged, its interval a bootstrap over
    /// repetitions (an open-loop cell's percentiles: `pooled.rs`), not the repetitions' median.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pooled: Vec<String>,
    /// Which side limited the cell: `server`, `client` or `neither` (latency-bound / paced).
    pub bottleneck: String,
    /// True when the runs disagree more than a comparison can bear (see `stats::is_noisy`).
    pub noisy: bool,
    /// Set when a kept repetition was measured while something else took a meaningful share of
    /// the pinned CPUs (re-runs exhausted): the reason, with the figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
    /// Repetitions measured again because they were disturbed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u32,
    /// File of the raw HDR histograms (one interval-log line per run), relative to the results folder.
    pub hdr_file: Option<String>,
    /// The emulated link between client and server, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkRecord>,
    /// The `--threshold` conditions (and the experiment's `thresholds`) judged on the cell's medians.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CellStatus {
    Ok,
    /// Some calls failed, or fewer repetitions ran than planned.
    Partial,
    /// The server crashed during the cell.
    ServerCrashed,
    /// The server did not start, or failed `verify`: not measured.
    NotMeasured,
    /// The run was interrupted during this cell.
    Interrupted,
    Error,
}

/// The emulated link a cell ran across: its spec, and round trips measured on it with a TCP
/// ping-pong before the cell (the link's own at RTT 0: what it adds besides its delay).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkRecord {
    /// As a suite writes it: `rtt=40ms,bandwidth=20mbit`.
    pub spec: String,
    pub rtt_us: f64,
    pub measured_rtt_us: f64,
    pub own_rtt_us: f64,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// A median with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    /// Number of repetitions it rests on.
    pub n: usize,
}

impl Estimate {
    /// The same ratio read the other way round (b / a): its interval's bounds swap.
    pub fn inverse(&self) -> Estimate {
        Estimate { median: 1.0 / self.median, lo: 1.0 / self.hi, hi: 1.0 / self.lo, n: self.n }
    }
}

/// `a / b` for one metric of two cells of the same experiment.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    pub experiment: String,
    pub metric: String,
    pub a: String,
    pub b: String,
    /// Timings: the Hodges–Lehmann ratio with its rank-test interval (`stats::rank_ratio`).
    /// Exact counts: the ratio of the medians, `lo` = `hi` = `median`.
    pub ratio: Estimate,
    /// `a higher`, `b higher`, `no significant difference` (the ratio's interval holds 1), `too
    /// few repetitions to tell`, or for exact counts `equal`.
    pub verdict: String,
    /// True for exact counts (bytes per call, connections): compared as numbers, no interval.
    #[serde(default)]
    pub exact: bool,
    /// The real coverage of the timing interval (0.95 or more, less when the verdict is `too few
    /// repetitions to tell`: 0.90 for 3 against 3); None for exact counts and older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
}

/// The metrics every cell summarises, with the unit and whether more is better.
pub const METRICS: &[(&str, &str, bool)] = &[
    ("throughput_per_s", "calls/s", true),
    ("latency_p50_us", "µs", false),
    ("latency_p90_us", "µs", false),
    ("latency_p99_us", "µs", false),
    ("latency_p99.9_us", "µs", false),
    ("latency_mean_us", "µs", false),
    ("client_cpu_us_per_call", "CPU-µs/call", false),
    ("server_cpu_us_per_call", "CPU-µs/call", false),
    ("client_cpu_cores", "cores", false),
    ("server_cpu_cores", "cores", false),
    ("server_rss_peak_kib", "KiB", false),
    ("wire_sent_per_call", "B/call", false),
    ("wire_received_per_call", "B/call", false),
    ("ip_sent_per_call", "B/call", false),
    ("ip_received_per_call", "B/call", false),
    ("rate_achieved", "calls/s", true),
    ("connections_opened", "", false),
    ("duration_s", "s", false),
    ("wall_us_per_call", "µs", false),
    ("cold_name_lookup_p50_us", "µs", false),
    ("cold_tcp_connect_p50_us", "µs", false),
    ("cold_tls_handshake_p50_us", "µs", false),
    ("cold_quic_handshake_p50_us", "µs", false),
    ("cold_rest_p50_us", "µs", false),
    ("link_forwarder_cores", "cores", false),
    ("link_lost_up", "packets", false),
    ("link_lost_down", "packets", false),
    ("tcp_retransmitted", "segments", false),
    ("quic_packets_lost", "packets", false),
    ("quic_congestion_events", "", false),
];

/// Metrics that are counts, not timings: compared as exact numbers, never through an interval.
pub const EXACT_COUNTS: &[&str] = &[
    "wire_sent_per_call",
    "wire_received_per_call",
    "ip_sent_per_call",
    "ip_received_per_call",
    "connections_opened",
    "link_lost_up",
    "link_lost_down",
    "tcp_retransmitted",
    "quic_packets_lost",
    "quic_congestion_events",
];

pub fn is_exact_count(metric: &str) -> bool {
    EXACT_COUNTS.contains(&metric)
}

/// True for the metrics of [`METRICS`] where more is better (throughput), false for the rest.
pub fn higher_is_better(metric: &str) -> bool {
    METRICS.iter().find(|(m, _, _)| *m == metric).is_some_and(|(_, _, more)| *more)
}

impl Results {
    pub fn cell(&self, id: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.id == id)
    }
    pub fn experiment(&self, id: &str) -> Option<&Experiment> {
        self.experiments.iter().find(|e| e.id == id)
    }
}
