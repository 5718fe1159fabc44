//! What a tool says it did, in its own terms converted to callbench's units.

use crate::error::PeerError;
use std::collections::BTreeMap;

/// Latency figures as the tool reports them, in microseconds: `p50`, `p90`, `p95`, `p99`, `max`,
/// `mean` — only those it gives (ab and locust round to whole milliseconds; h2load gives none, so
/// they come from its own per-request log).
pub type Latency = BTreeMap<&'static str, f64>;

/// A tool's own report of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims {
    /// Calls it counts as successful, and as failed (errors, non-2xx statuses, timeouts).
    pub ok: u64,
    pub errors: u64,
    /// The window its figures cover, in seconds.
    pub seconds: f64,
    /// Calls/s as it reports them (what a user reads off the tool).
    pub throughput: f64,
    pub latency: Latency,
    /// The error kinds it names, with their counts.
    pub error_kinds: BTreeMap<String, u64>,
}

impl Claims {
    /// `n` answers with HTTP status `code` (`-1`: fortio's socket errors, `0`: vegeta's calls without
    /// an answer): 2xx and 3xx are successes, anything else an error of its own kind. Counts
    /// saturate: a report is the tool's text, and a huge count must not overflow.
    pub fn add_status(&mut self, code: &str, n: u64) {
        if code.starts_with('2') || code.starts_with('3') {
            self.ok = self.ok.saturating_add(n);
            return;
        }
        self.errors = self.errors.saturating_add(n);
        let kind = match code {
            "-1" => "socket".to_string(),
            "0" => "no answer".to_string(),
            other => format!("status {other}"),
        };
        self.add_error_kind(kind, n);
    }

    /// `n` more errors of `kind` in the per-kind counts (saturating, as [`Claims::add_status`]).
    pub fn add_error_kind(&mut self, kind: String, n: u64) {
        let count = self.error_kinds.entry(kind).or_default();
        *count = count.saturating_add(n);
    }

    /// Throughput when the tool prints none: successful calls over its window.
    pub fn rate_of(ok: u64, seconds: f64) -> f64 {
        if seconds > 0.0 {
            ok as f64 / seconds
        } else {
            0.0
        }
    }
}

/// A time as wrk and h2load print it ("185.00us", "34us", "2.43ms", "2.01s", "1.50m"), in
/// microseconds.
pub(crate) fn micros(value: &str) -> Option<f64> {
    let (number, unit) = value.split_at(value.find(|c: char| c.is_ascii_alphabetic())?);
    let scale = match unit {
        "us" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "m" => 60e6,
        "h" => 3600e6,
        _ => return None,
    };
    number.parse::<f64>().ok().filter(|n| n.is_finite()).map(|n| n * scale)
}

/// The `q`-quantile (0..=1) of sorted samples, none of none: the results' one definition,
/// [`callbench_results::stats::nearest_rank`].
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    (!sorted.is_empty()).then(|| callbench_results::stats::nearest_rank(sorted, q))
}

/// p50, p90, p95, p99, max and mean of samples (any order).
pub fn latency_of(mut samples: Vec<f64>) -> Latency {
    samples.sort_by(f64::total_cmp);
    let mut l = Latency::new();
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)] {
        if let Some(v) = quantile(&samples, q) {
            l.insert(name, v);
        }
    }
    if !samples.is_empty() {
        l.insert("mean", samples.iter().sum::<f64>() / samples.len() as f64);
    }
    l
}

/// A number in a JSON report, as f64 (integers too).
pub fn number(v: &serde_json::Value, what: &str) -> Result<f64, PeerError> {
    v.as_f64().ok_or_else(|| PeerError::Report(format!("{what} is not a number in its JSON report")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(
            (quantile(&s, 0.5), quantile(&s, 0.99), quantile(&s, 1.0), quantile(&s, 0.0)),
            (Some(50.0), Some(99.0), Some(100.0), Some(1.0))
        );
        let l = latency_of(vec![3.0, 1.0, 2.0]);
        assert_eq!((l["p50"], l["max"], l["mean"]), (2.0, 3.0, 2.0));
        assert!(latency_of(vec![]).is_empty());
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        // A peer's report the fuzzer found (fuzz/regressions/peer_reports): two 2xx codes and two
        // error codes, each counted near u64::MAX.
        let mut claims = Claims::default();
        for code in ["200", "201", "500", "500"] {
            claims.add_status(code, u64::MAX - 1);
        }
        assert_eq!((claims.ok, claims.errors), (u64::MAX, u64::MAX));
        assert_eq!(claims.error_kinds["status 500"], u64::MAX);
    }
}
