//! What `callbench load` reports: the run's settings beside its summary, per-segment figures for
//! rate shapes, and the search's trials. Its JSON form follows `schemas/load.schema.json`.

use crate::build::Built;
use crate::sink::RunResult;
use crate::spec::LoadSpec;
use callbench_engine::stats::{percentiles, Percentiles};
use callbench_engine::Summary;
use serde::Serialize;
use std::time::Duration;

/// An error kind as people read it: a gRPC status with its name (`grpc_5 (NOT_FOUND)`), any
/// other kind as the results name it (`http_500`, `timeout`).
pub fn error_text(kind: &str) -> String {
    let name =
        kind.strip_prefix("grpc_").and_then(|c| c.parse::<i64>().ok()).and_then(callbench_contract::grpc_status::name);
    match name {
        Some(name) => format!("{kind} ({name})"),
        None => kind.to_string(),
    }
}

/// Failed calls by kind, most first, and what the server said of the first:
/// `grpc_3 (INVALID_ARGUMENT) ×30, timeout ×2; the first said grpc_3: ntimes must be in 1..1000`.
pub fn failures_text(errors: &std::collections::BTreeMap<String, u64>, first_failure: Option<&str>) -> String {
    let mut kinds: Vec<(&String, &u64)> = errors.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let list: Vec<String> = kinds.iter().map(|(kind, n)| format!("{} ×{n}", error_text(kind))).collect();
    let said = first_failure.map_or(String::new(), |f| format!("; the first said {f}"));
    format!("{}{said}", list.join(", "))
}

/// The settings a run used, as a user would write them.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// `closed` or `open`.
    pub model: &'static str,
    pub concurrency: usize,
    pub connections: usize,
    pub new_connection_per_call: bool,
    pub calls: Option<u64>,
    pub duration_s: Option<f64>,
    pub warmup_s: f64,
    pub rate: Option<f64>,
    pub rate_shape: Option<String>,
    /// `uniform` or `poisson`.
    pub arrivals: &'static str,
    /// How the target's name was looked up: `per-connection` (the cold calls' first phase), `once`
    /// (before the run), or `none` (the target is an address).
    pub name_lookup: &'static str,
    pub timeout_s: Option<f64>,
    pub gzip: bool,
    pub client_threads: usize,
    pub precise_timer: bool,
    /// What drove the sockets: `epoll`, `io_uring`, or `none` (in-process calls).
    pub io: &'static str,
    /// Why: as asked, or what io_uring's self-check found (how it posts completions here, or why
    /// `--io auto` fell back to epoll). Empty for in-process calls.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub io_why: String,
    /// This machine's share of a run split across several (`--segment`): callers, connections and
    /// calls above are its share; `rate` and `rate_shape` are the whole run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
}

/// Figures of one rate segment (steps and ramps).
#[derive(Debug, Clone, Serialize)]
pub struct SegmentReport {
    pub from_s: f64,
    pub to_s: f64,
    pub rate_from: f64,
    pub rate_to: f64,
    pub requested_per_s: f64,
    pub achieved_per_s: f64,
    pub calls_ok: u64,
    pub calls_errors: u64,
    pub latency_us: Option<Percentiles>,
    pub latency_uncorrected_us: Option<Percentiles>,
}

/// One open-loop trial of the search.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub rate: f64,
    pub achieved_per_s: f64,
    pub latency_at_objective_us: Option<u64>,
    pub errors: u64,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize)]
/// What `--slo` searched and found.
pub struct SearchReport {
    pub objective: String,
    pub closed_loop_max_per_s: f64,
    /// The highest passing rate; None if even the lowest trial failed.
    pub best_rate: Option<f64>,
    pub trials: Vec<Trial>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub callbench_version: &'static str,
    pub target: String,
    /// What was called: `GET /students`, `callbench.v1.Life/Step`, `echo`...
    pub call: String,
    pub protocol: &'static str,
    pub tls: bool,
    pub workload: Option<String>,
    /// What the calls sent: the same request, several in turn, templates.
    pub data: crate::data::DataUsed,
    pub settings: Settings,
    /// True when Ctrl-C ended the run early: the figures cover what ran.
    pub interrupted: bool,
    #[serde(flatten)]
    pub summary: Summary,
    pub segments: Vec<SegmentReport>,
    pub search: Option<SearchReport>,
    /// The `--threshold` conditions judged on this run (absent when none was given).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::threshold::Judged>,
}

impl LoadReport {
    pub fn new(spec: &LoadSpec, built: &Built, result: &RunResult, search: Option<SearchReport>) -> Self {
        let stop = spec.stop();
        let open = result.info.requested_calls.is_some();
        let rate = search.as_ref().and_then(|s| s.best_rate).or(spec.rate).filter(|_| open);
        LoadReport {
            callbench_version: env!("CARGO_PKG_VERSION"),
            target: spec.target.clone(),
            call: built.call.clone(),
            protocol: built.protocol,
            tls: built.tls,
            workload: spec.workload.clone().or_else(|| spec.target.strip_prefix("inproc:").map(str::to_string)),
            data: built.data.clone(),
            settings: Settings {
                model: if open { "open" } else { "closed" },
                concurrency: built.concurrency,
                connections: built.connections,
                new_connection_per_call: spec.new_connection_per_call,
                calls: stop.calls,
                duration_s: stop.duration.map(|d| d.as_secs_f64()),
                warmup_s: stop.warmup.as_secs_f64(),
                rate,
                rate_shape: spec.rate_shape.clone(),
                arrivals: if spec.poisson { "poisson" } else { "uniform" },
                name_lookup: built.lookup,
                timeout_s: spec.timeout().map(|d| d.as_secs_f64()),
                gzip: spec.gzip,
                client_threads: spec.threads,
                precise_timer: !spec.coarse_timer && open,
                io: built.io,
                io_why: io_why(spec, built),
                segment: spec.share().ok().filter(|s| !s.is_whole()).map(|s| s.describe()),
            },
            interrupted: result.info.cancelled,
            summary: result.stats.summary(&result.info),
            segments: segment_reports(result, stop.warmup, spec.share().map_or(1.0, |s| s.fraction())),
            search,
            thresholds: Vec::new(),
        }
    }
}

/// `share`: this machine's fraction of the rate (1 alone).
fn segment_reports(result: &RunResult, warmup: Duration, share: f64) -> Vec<SegmentReport> {
    // Where the measured window ended: the shape's end, or where the run stopped (Ctrl-C, -n).
    let ended = warmup + result.info.window;
    let mut reports = Vec::new();
    let mut from = Duration::ZERO;
    for (segment, stats) in result.segment_bounds.iter().zip(&result.segments) {
        let to = from + segment.duration;
        if from >= ended {
            break; // the run ended (-n, -z or Ctrl-C) before this segment
        }
        // Measured over the part after the warm-up and before the run's end.
        let (start, end) = (from.max(warmup), to.min(ended));
        reports.push(SegmentReport {
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
            rate_from: segment.from,
            rate_to: segment.to,
            requested_per_s: (segment.from + segment.to) / 2.0 * share,
            achieved_per_s: stats.achieved_rate(start, end.max(start)),
            calls_ok: stats.ok,
            calls_errors: stats.calls() - stats.ok,
            latency_us: percentiles(&stats.latency_us),
            latency_uncorrected_us: percentiles(&stats.latency_uncorrected_us),
        });
        from = to;
    }
    reports
}

/// Why the sockets went through what they did (see [`Settings::io_why`]).
fn io_why(spec: &LoadSpec, built: &Built) -> String {
    match (built.io, built.protocol) {
        ("none", _) => String::new(),
        (_, "h3") => "epoll: quinn drives HTTP/3's UDP socket".into(),
        (io, _) => spec.io.why(io == "io_uring"),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn a_grpc_status_reads_with_its_name() {
        assert_eq!(error_text("grpc_5"), "grpc_5 (NOT_FOUND)");
        assert_eq!(error_text("grpc_16"), "grpc_16 (UNAUTHENTICATED)");
        assert_eq!(error_text("grpc_99"), "grpc_99");
        assert_eq!(error_text("http_500"), "http_500");
        assert_eq!(error_text("timeout"), "timeout");
    }
}
