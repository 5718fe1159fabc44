//! The report as text (for people, `text.rs`), JSON (schema in `schemas/load.schema.json`), CSV (one row) or
//! the HDR percentile distribution that wrk2 and the HdrHistogram tools print.

use callbench_load::LoadReport;
use hdrhistogram::Histogram;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Hdr,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "hdr" => Ok(Format::Hdr),
            other => Err(format!("unknown output format {other:?} (text, json, csv, hdr)")),
        }
    }
}

pub fn render(report: &LoadReport, latency: &Histogram<u64>, format: Format) -> String {
    match format {
        Format::Text => super::text::text(report),
        Format::Json => serde_json::to_string_pretty(report).expect("a report serialises") + "\n",
        Format::Csv => csv(report),
        Format::Hdr => hdr(latency),
    }
}

const CSV_COLUMNS: &str = "target,call,protocol,tls,model,concurrency,connections,calls_ok,calls_errors,duration_s,\
throughput_per_s,latency_p50_us,latency_p90_us,latency_p95_us,latency_p99_us,latency_p99_9_us,latency_max_us,\
latency_mean_us,latency_uncorrected_p50_us,latency_uncorrected_p99_us,connections_opened,connect_p50_us,\
wire_sent_per_call,wire_received_per_call,payload_sent_per_call,payload_received_per_call,client_cpu_us_per_call,\
rate_requested,rate_achieved,late_starts,interrupted,goaways,retries,planned_s,not_started,rate_kept,\
cold_calls,cold_tcp_connect_p50_us,cold_tls_handshake_p50_us,cold_rest_p50_us,cold_quic_handshake_p50_us,\
cold_name_lookup_p50_us";

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

pub fn csv(r: &LoadReport) -> String {
    let s = &r.summary;
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let l = s.latency_us.as_ref();
    let u = s.latency_uncorrected_us.as_ref();
    let fields = [
        csv_field(&r.target),
        csv_field(&r.call),
        r.protocol.to_string(),
        r.tls.to_string(),
        r.settings.model.to_string(),
        r.settings.concurrency.to_string(),
        r.settings.connections.to_string(),
        s.calls.ok.to_string(),
        s.calls.errors.to_string(),
        format!("{:.6}", s.duration_s),
        format!("{:.3}", s.throughput_per_s),
        opt(l.map(|p| p.p50)),
        opt(l.map(|p| p.p90)),
        opt(l.map(|p| p.p95)),
        opt(l.map(|p| p.p99)),
        opt(l.map(|p| p.p99_9)),
        opt(l.map(|p| p.max)),
        l.map_or(String::new(), |p| format!("{:.3}", p.mean)),
        opt(u.map(|p| p.p50)),
        opt(u.map(|p| p.p99)),
        s.connections_opened.to_string(),
        opt(s.connect_us.as_ref().map(|p| p.p50)),
        format!("{:.3}", s.wire_bytes_per_call.sent),
        format!("{:.3}", s.wire_bytes_per_call.received),
        format!("{:.3}", s.payload_bytes_per_call.sent),
        format!("{:.3}", s.payload_bytes_per_call.received),
        format!("{:.3}", s.client_cpu_us_per_call),
        s.rate.map_or(String::new(), |r| format!("{:.3}", r.requested)),
        s.rate.map_or(String::new(), |r| format!("{:.3}", r.achieved)),
        s.rate.map_or(String::new(), |r| r.late_starts.to_string()),
        r.interrupted.to_string(),
        s.goaways.to_string(),
        s.retries.to_string(),
        format!("{:.6}", s.planned_s),
        s.rate.map_or(String::new(), |r| r.not_started.to_string()),
        s.rate.map_or(String::new(), |r| r.kept.to_string()),
        opt(s.cold_calls.map(|c| c.calls)),
        opt(s.cold_calls.and_then(|c| c.tcp_connect_us.map(|t| t.p50))),
        opt(s.cold_calls.and_then(|c| c.tls_handshake_us.map(|t| t.p50))),
        opt(s.cold_calls.map(|c| c.rest_us.p50)),
        opt(s.cold_calls.and_then(|c| c.quic_handshake_us.map(|t| t.p50))),
        opt(s.cold_calls.and_then(|c| c.name_lookup_us.map(|t| t.p50))),
    ];
    format!("{CSV_COLUMNS}\n{}\n", fields.join(","))
}

/// The percentile distribution in milliseconds, in HdrHistogram's `outputPercentileDistribution`
/// layout (5 ticks per half distance), as wrk2 prints it.
pub fn hdr(h: &Histogram<u64>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:>12} {:>14} {:>10} {:>14}\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    if h.is_empty() {
        let _ = writeln!(out, "#[No values recorded]");
        return out;
    }
    let mut total = 0;
    for v in h.iter_quantiles(5) {
        let value = v.value_iterated_to() as f64 / 1000.0;
        let q = v.quantile_iterated_to();
        total += v.count_since_last_iteration();
        if q < 1.0 {
            let _ = writeln!(out, "{value:>12.3} {q:>14.12} {total:>10} {:>14.2}", 1.0 / (1.0 - q));
        } else {
            let _ = writeln!(out, "{value:>12.3} {q:>14.12} {total:>10}");
        }
    }
    let _ = writeln!(out, "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]", h.mean() / 1000.0, h.stdev() / 1000.0);
    let _ = writeln!(out, "#[Max     = {:>12.3}, Total count    = {:>12}]", h.max() as f64 / 1000.0, h.len());
    let _ = writeln!(out, "#[Buckets = {:>12}, SubBuckets     = {:>12}]", h.buckets(), sub_buckets(h));
    out
}

/// HdrHistogram's sub-bucket count: 2^ceil(log2(2 × 10^sigfig)).
fn sub_buckets(h: &Histogram<u64>) -> u64 {
    (2.0 * 10f64.powi(h.sigfig() as i32)).log2().ceil().exp2() as u64
}
