//! Records aggregated into mergeable HDR histograms (µs) and counters; a `Summary` is plain data.

use crate::driver::RunInfo;
use crate::record::{CallRecord, ErrorKind};
use crate::stop::Stop;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Latencies up to one hour, 3 significant digits.
const MAX_US: u64 = 3_600_000_000;

#[derive(Debug, Clone)]
pub struct Stats {
    stop: Stop,
    late_after: Duration,
    pub latency_us: Histogram<u64>,
    pub latency_uncorrected_us: Histogram<u64>,
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub late_starts: u64,
    pub wire_sent: u64,
    pub wire_received: u64,
    pub payload_sent: u64,
    pub payload_received: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
    pub mean: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub calls_ok: u64,
    pub calls_errors: u64,
    pub errors: BTreeMap<String, u64>,
    pub throughput_per_s: f64,
    pub latency_us: Percentiles,
    pub latency_uncorrected_us: Percentiles,
    pub late_starts: u64,
    pub wire_bytes_per_call: (f64, f64),
    pub payload_bytes_per_call: (f64, f64),
    /// (requested, achieved) calls/s, in open loop.
    pub rate: Option<(f64, f64)>,
}

impl Stats {
    /// Records intended before `stop.warmup` are left out; a start more than `late_after` after its
    /// intended time counts as late.
    pub fn new(stop: Stop, late_after: Duration) -> Self {
        let histogram = || Histogram::new_with_max(MAX_US, 3).expect("valid histogram bounds");
        Stats {
            stop,
            late_after,
            latency_us: histogram(),
            latency_uncorrected_us: histogram(),
            ok: 0,
            errors: BTreeMap::new(),
            late_starts: 0,
            wire_sent: 0,
            wire_received: 0,
            payload_sent: 0,
            payload_received: 0,
        }
    }

    pub fn add(&mut self, r: &CallRecord) {
        if self.stop.in_warmup(r.intended) {
            return;
        }
        let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.latency_us.saturating_record(us(r.latency()));
        self.latency_uncorrected_us.saturating_record(us(r.latency_uncorrected()));
        match r.outcome {
            crate::record::Outcome::Ok => self.ok += 1,
            crate::record::Outcome::Error(kind) => *self.errors.entry(kind).or_default() += 1,
        }
        self.late_starts += u64::from(r.start_delay() > self.late_after);
        self.wire_sent += r.bytes.wire_sent;
        self.wire_received += r.bytes.wire_received;
        self.payload_sent += r.bytes.payload_sent;
        self.payload_received += r.bytes.payload_received;
    }

    /// Adds another aggregate (another worker, process or repetition) into this one.
    pub fn merge(&mut self, other: &Stats) {
        self.latency_us.add(&other.latency_us).expect("same bounds");
        self.latency_uncorrected_us.add(&other.latency_uncorrected_us).expect("same bounds");
        self.ok += other.ok;
        for (kind, n) in &other.errors {
            *self.errors.entry(*kind).or_default() += n;
        }
        self.late_starts += other.late_starts;
        self.wire_sent += other.wire_sent;
        self.wire_received += other.wire_received;
        self.payload_sent += other.payload_sent;
        self.payload_received += other.payload_received;
    }

    pub fn calls(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    pub fn summary(&self, run: &RunInfo) -> Summary {
        let calls = self.calls();
        let per_call = |n: u64| if calls == 0 { 0.0 } else { n as f64 / calls as f64 };
        let secs = run.window.as_secs_f64();
        let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        Summary {
            calls_ok: self.ok,
            calls_errors: calls - self.ok,
            errors: self.errors.iter().map(|(k, n)| (format!("{k:?}"), *n)).collect(),
            throughput_per_s: per_s(self.ok as f64),
            latency_us: percentiles(&self.latency_us),
            latency_uncorrected_us: percentiles(&self.latency_uncorrected_us),
            late_starts: self.late_starts,
            wire_bytes_per_call: (per_call(self.wire_sent), per_call(self.wire_received)),
            payload_bytes_per_call: (per_call(self.payload_sent), per_call(self.payload_received)),
            rate: run.requested_calls.map(|req| (per_s(req), per_s(calls as f64))),
        }
    }
}

fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let q = |p: f64| h.value_at_quantile(p);
    Percentiles { p50: q(0.5), p90: q(0.9), p95: q(0.95), p99: q(0.99), p99_9: q(0.999), max: h.max(), mean: h.mean() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ByteCounts, Outcome};

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn record(intended: u64, start: u64, end: u64, outcome: Outcome) -> CallRecord {
        let bytes = ByteCounts { wire_sent: 100, wire_received: 300, payload_sent: 10, payload_received: 30 };
        CallRecord { seq: 0, intended: MS(intended), start: MS(start), end: MS(end), connect: None, outcome, bytes }
    }

    fn info(window: u64, requested: Option<f64>) -> RunInfo {
        RunInfo { elapsed: MS(window), window: MS(window), requested_calls: requested, connections_opened: 1 }
    }

    #[test]
    fn percentiles_throughput_and_bytes() {
        let mut s = Stats::new(Stop::after_calls(100), MS(1));
        for i in 0..100 {
            s.add(&record(i * 10, i * 10, i * 10 + 1 + i % 10, Outcome::Ok));
        }
        s.add(&record(0, 0, 5, Outcome::Error(ErrorKind::HttpStatus(503))));
        let sum = s.summary(&info(1000, None));
        assert_eq!((sum.calls_ok, sum.calls_errors), (100, 1));
        assert_eq!(sum.errors["HttpStatus(503)"], 1);
        assert_eq!(sum.throughput_per_s, 100.0);
        assert_eq!(sum.latency_us.max, s.latency_us.highest_equivalent(10_000));
        assert!((5_000..=5_010).contains(&sum.latency_us.p50), "{:?}", sum.latency_us);
        assert_eq!(sum.wire_bytes_per_call, (100.0, 300.0));
        assert_eq!(sum.payload_bytes_per_call, (10.0, 30.0));
        assert_eq!(sum.rate, None);
    }

    #[test]
    fn warmup_excluded_late_starts_and_rates() {
        let mut s = Stats::new(Stop::after(MS(1000)).with_warmup(MS(100)), MS(1));
        s.add(&record(50, 50, 60, Outcome::Ok)); // warm-up
        s.add(&record(100, 100, 101, Outcome::Ok));
        s.add(&record(200, 205, 206, Outcome::Ok)); // 5 ms late
        let sum = s.summary(&info(1000, Some(4.0)));
        assert_eq!(sum.calls_ok, 2);
        assert_eq!(sum.late_starts, 1);
        assert_eq!(sum.rate, Some((4.0, 2.0)));
        assert_eq!(sum.latency_us.max, s.latency_us.highest_equivalent(6_000));
        assert!(sum.latency_uncorrected_us.max < 1_001);
    }

    #[test]
    fn merging_equals_adding_everything_to_one() {
        let stop = Stop::after_calls(10);
        let (mut a, mut b, mut all) = (Stats::new(stop, MS(1)), Stats::new(stop, MS(1)), Stats::new(stop, MS(1)));
        for i in 0..10 {
            let r = record(0, 0, i, if i == 3 { Outcome::Error(ErrorKind::Io) } else { Outcome::Ok });
            if i % 2 == 0 { &mut a } else { &mut b }.add(&r);
            all.add(&r);
        }
        a.merge(&b);
        assert_eq!(a.summary(&info(10, None)), all.summary(&info(10, None)));
    }
}
