//! The measures every summary is made of: HDR histograms of microseconds and their percentiles,
//! and figures per call (sent, received).

use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// Latencies up to one hour, 3 significant digits.
const MAX_US: u64 = 3_600_000_000;

pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_max(MAX_US, 3).expect("valid histogram bounds")
}

pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    #[serde(rename = "p99.9")]
    pub p99_9: u64,
    pub max: u64,
    pub min: u64,
    pub mean: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerCall {
    pub sent: f64,
    pub received: f64,
}

/// None for an empty histogram (no call measured), so nothing pretends to be a 0 µs latency.
pub fn percentiles(h: &Histogram<u64>) -> Option<Percentiles> {
    if h.is_empty() {
        return None;
    }
    let q = |p: f64| h.value_at_quantile(p);
    Some(Percentiles {
        p50: q(0.5),
        p90: q(0.9),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        max: h.max(),
        min: h.min(),
        mean: h.mean(),
    })
}
