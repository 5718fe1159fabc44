//! Building cells as `callbench run` would: repetitions scattered around a profile, summarised
//! by `analysis::summarise`, with a latency spectrum.

use callbench_primitives::rng::Rng;
use callbench_results::analysis;
use callbench_results::model::*;
use std::collections::BTreeMap;

pub const REPETITIONS: usize = 5;

/// What a cell costs, before the run-to-run jitter.
#[derive(Clone, Copy)]
pub struct Profile {
    pub p50_us: f64,
    /// Calls in flight (closed loop) — throughput follows from the latency.
    pub concurrency: f64,
    /// Open loop: the rate requested (throughput is the rate).
    pub rate: Option<f64>,
    pub client_cpu_us: f64,
    /// None in-process.
    pub server_cpu_us: Option<f64>,
    pub wire_sent: f64,
    pub wire_received: f64,
}

impl Profile {
    pub fn new(p50_us: f64, client_cpu_us: f64, server_cpu_us: Option<f64>, wire: (f64, f64)) -> Profile {
        Profile {
            p50_us,
            concurrency: 1.0,
            rate: None,
            client_cpu_us,
            server_cpu_us,
            wire_sent: wire.0,
            wire_received: wire.1,
        }
    }
}

/// Deterministic jitter in [-1, 1].
fn jitter(rng: &mut Rng) -> f64 {
    rng.next_f64() * 2.0 - 1.0
}

/// `n` repetitions of `p`, each figure scattered by ±`spread`.
pub fn runs(p: Profile, n: usize, spread: f64, seed: u64) -> Vec<RunMetrics> {
    let mut s = Rng::new(seed);
    (0..n)
        .map(|_| {
            let k = 1.0 + spread * jitter(&mut s);
            let p50 = p.p50_us * k;
            let lat =
                Latency { p50, p90: p50 * 1.3, p99: p50 * 2.1, p99_9: p50 * 3.5, max: p50 * 6.0, mean: p50 * 1.1 };
            let throughput = p.rate.unwrap_or(p.concurrency * 1e6 / lat.mean);
            let calls = (throughput * 1.0) as u64;
            let client_cpu = p.client_cpu_us * (1.0 + spread * 0.5 * jitter(&mut s));
            let server_cpu = p.server_cpu_us.map(|v| v * (1.0 + spread * 0.5 * jitter(&mut s)));
            RunMetrics {
                calls_ok: calls,
                calls_errors: 0,
                errors: BTreeMap::new(),
                duration_s: 1.0,
                throughput_per_s: throughput,
                latency_us: Some(lat),
                latency_uncorrected_us: Some(lat),
                rate_requested: p.rate,
                rate_achieved: p.rate.map(|r| r * 0.998),
                connections_opened: p.concurrency.min(50.0) as u64,
                connect_p50_us: Some(85.0),
                wire_sent_per_call: p.wire_sent,
                wire_received_per_call: p.wire_received,
                payload_sent_per_call: p.wire_sent * 0.3,
                payload_received_per_call: p.wire_received * 0.6,
                client_cpu_us_per_call: client_cpu,
                client_cpu_cores: throughput * client_cpu / 1e6,
                server_cpu_us_per_call: server_cpu,
                server_cpu_cores: server_cpu.map(|c| throughput * c / 1e6),
                server_rss_peak_kib: p.server_cpu_us.map(|_| 14_336),
                ..RunMetrics::default()
            }
        })
        .collect()
}

/// Percentile (0–100) → factor of the median, shaped like a real service's spectrum.
const SHAPE: &[(f64, f64)] = &[
    (0.0, 0.62),
    (25.0, 0.9),
    (50.0, 1.0),
    (75.0, 1.12),
    (90.0, 1.3),
    (99.0, 2.1),
    (99.9, 3.5),
    (99.99, 5.0),
    (100.0, 6.0),
];

pub struct CellSpec<'a> {
    pub experiment: &'a str,
    pub server: &'a str,
    pub transport: &'a str,
    pub workload: &'a str,
    pub sweep: Option<(&'a str, f64)>,
    pub runs: Vec<RunMetrics>,
    pub status: CellStatus,
    pub error: Option<&'a str>,
}

pub fn cell(spec: CellSpec) -> Cell {
    let mut id = format!("{}/{}/{}", spec.experiment, spec.workload, spec.server);
    let mut params = BTreeMap::new();
    params.insert("duration".to_string(), serde_json::json!("1s"));
    if let Some((param, x)) = spec.sweep {
        id.push_str(&format!("/{param}={x}"));
        params.insert(param.to_string(), serde_json::json!(x));
    }
    let median_p50 = callbench_results::stats::median(
        &spec.runs.iter().filter_map(|r| r.latency_us.map(|l| l.p50)).collect::<Vec<_>>(),
    );
    let mut cell = Cell {
        id: id.clone(),
        experiment: spec.experiment.into(),
        server: spec.server.into(),
        workload: spec.workload.into(),
        transport: spec.transport.into(),
        params,
        x: spec.sweep.map(|s| s.1),
        status: spec.status,
        error: spec.error.map(String::from),
        runs: spec.runs,
        summary: BTreeMap::new(),
        spectrum: median_p50.map_or(vec![], |m| SHAPE.iter().map(|(p, f)| (*p, m * f)).collect()),
        pooled: vec![],
        bottleneck: String::new(),
        noisy: false,
        disturbed: None,
        reruns: 0,
        hdr_file: (median_p50.is_some()).then(|| format!("hdr/{}.hlog", id.replace('/', "_"))),
        network: None,
        thresholds: Vec::new(),
    };
    let headline = headline(&cell.experiment);
    analysis::summarise(&mut cell, headline, 0.0, 1, 1);
    cell
}

/// The headline metric of each fixture experiment.
fn headline(experiment: &str) -> &'static str {
    match experiment {
        "closed-50" | "connections" => "throughput_per_s",
        "rate-sweep" => "latency_p99_us",
        _ => "latency_p50_us",
    }
}
