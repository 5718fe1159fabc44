//! The metrics of one measured run (a `load`, or one repetition of a cell), as points: what
//! callbench measured, nothing derived that the figures do not hold.

use crate::native::{NativeHistogram, FINEST_SCHEMA};
use crate::point::{Labels, Point};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

pub const LATENCY: &str = "callbench_latency_seconds";

/// One run's figures, as `load` and results.json hold them.
#[derive(Debug, Clone, Default)]
pub struct Figures<'a> {
    /// Latency in µs from each call's intended start (coordinated-omission corrected).
    pub latency_us: Option<&'a Histogram<u64>>,
    pub calls_ok: u64,
    pub calls_errors: u64,
    pub errors: BTreeMap<String, u64>,
    pub duration_s: f64,
    pub throughput_per_s: f64,
    pub wire_sent_per_call: f64,
    pub wire_received_per_call: f64,
    pub payload_sent_per_call: f64,
    pub payload_received_per_call: f64,
    pub client_cpu_us_per_call: f64,
    pub server_cpu_us_per_call: Option<f64>,
}

/// The points of one run, every one labelled `labels`.
pub fn points(labels: &Labels, f: &Figures) -> Vec<Point> {
    let with = |extra: &[(&str, &str)]| {
        let mut all = labels.clone();
        all.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        all
    };
    let mut out = vec![
        Point::gauge(
            "callbench_calls",
            "Calls made in the measured window, by outcome.",
            "",
            with(&[("outcome", "ok")]),
            f.calls_ok as f64,
        ),
        Point::gauge(
            "callbench_calls",
            "Calls made in the measured window, by outcome.",
            "",
            with(&[("outcome", "error")]),
            f.calls_errors as f64,
        ),
    ];
    for (kind, n) in &f.errors {
        out.push(Point::gauge(
            "callbench_errors",
            "Failed calls by kind of failure.",
            "",
            with(&[("kind", kind)]),
            *n as f64,
        ));
    }
    let gauges: [(&'static str, &'static str, &'static str, f64); 7] = [
        ("callbench_duration_seconds", "The measured window's length.", "seconds", f.duration_s),
        (
            "callbench_throughput_calls_per_second",
            "Successful calls per second of the measured window.",
            "",
            f.throughput_per_s,
        ),
        (
            "callbench_wire_sent_bytes_per_call",
            "Bytes the client sent on the wire per call (headers and framing included).",
            "",
            f.wire_sent_per_call,
        ),
        (
            "callbench_wire_received_bytes_per_call",
            "Bytes the client received on the wire per call.",
            "",
            f.wire_received_per_call,
        ),
        ("callbench_payload_sent_bytes_per_call", "Request body bytes per call.", "", f.payload_sent_per_call),
        ("callbench_payload_received_bytes_per_call", "Answer body bytes per call.", "", f.payload_received_per_call),
        (
            "callbench_client_cpu_seconds_per_call",
            "The client's CPU time per call (user and system).",
            "",
            f.client_cpu_us_per_call * 1e-6,
        ),
    ];
    for (name, help, unit, value) in gauges {
        out.push(Point::gauge(name, help, unit, labels.clone(), value));
    }
    if let Some(server) = f.server_cpu_us_per_call {
        let help = "The server processes' CPU time per call (user and system).";
        out.push(Point::gauge("callbench_server_cpu_seconds_per_call", help, "", labels.clone(), server * 1e-6));
    }
    if let Some(h) = f.latency_us.filter(|h| !h.is_empty()) {
        let help = "Call latency from each call's intended start, converted bucket by bucket from callbench's \
                    HDR histogram (schema 8: a quantile within 0.28% of callbench's own).";
        out.push(Point::histogram(
            LATENCY,
            help,
            "seconds",
            labels.clone(),
            NativeHistogram::from_hdr(h, 1e-6, FINEST_SCHEMA),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::Value;

    #[test]
    fn a_run_without_server_cpu_or_calls_has_no_such_series() {
        let labels: Labels = vec![("target".into(), "http://127.0.0.1:8080/".into())];
        let f =
            Figures { calls_ok: 0, calls_errors: 3, errors: [("timeout".to_string(), 3)].into(), ..Default::default() };
        let points = points(&labels, &f);
        let names: Vec<&str> = points.iter().map(|p| p.name).collect();
        assert!(!names.contains(&"callbench_server_cpu_seconds_per_call"));
        assert!(!names.contains(&LATENCY), "no histogram without a call");
        let errors = points.iter().find(|p| p.name == "callbench_errors").unwrap();
        assert_eq!(errors.value, Value::Gauge(3.0));
        assert!(errors.labels.contains(&("kind".into(), "timeout".into())));
    }
}
