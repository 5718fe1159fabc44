//! The report as text (for people), JSON (schema in `schemas/load.schema.json`), CSV (one row) or
//! the HDR percentile distribution that wrk2 and the HdrHistogram tools print.

use callbench_engine::stats::Percentiles;
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
        Format::Text => text(report),
        Format::Json => serde_json::to_string_pretty(report).expect("a report serialises") + "\n",
        Format::Csv => csv(report),
        Format::Hdr => hdr(latency),
    }
}

/// µs as a short human figure: 812 µs, 1.23 ms, 2.50 s.
pub fn micros(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

fn bytes(n: f64) -> String {
    if n < 10_000.0 {
        format!("{n:.0} B")
    } else if n < 10_000_000.0 {
        format!("{:.1} kB", n / 1e3)
    } else {
        format!("{:.1} MB", n / 1e6)
    }
}

fn spectrum(p: &Percentiles) -> String {
    format!(
        "p50 {}  p90 {}  p95 {}  p99 {}  p99.9 {}  max {}  (mean {})",
        micros(p.p50 as f64),
        micros(p.p90 as f64),
        micros(p.p95 as f64),
        micros(p.p99 as f64),
        micros(p.p99_9 as f64),
        micros(p.max as f64),
        micros(p.mean)
    )
}

pub fn text(r: &LoadReport) -> String {
    let s = &r.summary;
    let set = &r.settings;
    let mut out = String::new();
    let tls = if r.tls { " over TLS" } else { "" };
    if let Some(rate) = s.rate.filter(|rate| !rate.kept && rate.requested > 0.0) {
        // First, before any figure: the load asked for is not the load this server got.
        let what = if rate.not_started > 0 {
            let planned = s.calls.ok + s.calls.errors + rate.not_started;
            format!(
                "{} of the {planned} calls planned for {:.2} s could not start by its end and were not made \
                 (their latency is in no figure below)",
                rate.not_started, s.planned_s
            )
        } else {
            format!("the calls planned for {:.2} s took {:.2} s", s.planned_s, s.duration_s)
        };
        let _ = writeln!(
            out,
            "Rate not kept: {:.1} calls/s requested, {:.1} calls/s delivered ({:+.1}%); {what}",
            rate.requested,
            s.throughput_per_s,
            (s.throughput_per_s / rate.requested - 1.0) * 100.0,
        );
    }
    let _ = writeln!(out, "Target       {}  ({}, {}{tls})", r.target, r.call, r.protocol);
    if r.data.kind != "one" {
        let _ = writeln!(out, "Data         {}", r.data.describe());
    }
    let model = match (set.model, &set.rate_shape, set.rate) {
        ("open", Some(shape), _) => format!("open loop, rate shape {shape}"),
        ("open", None, Some(rate)) => format!("open loop at {rate:.0} calls/s ({})", set.arrivals),
        ("open", ..) => "open loop".to_string(),
        _ => "closed loop".to_string(),
    };
    let connections = if r.protocol == "inproc" {
        String::new()
    } else if set.new_connection_per_call {
        ", a new connection per call".to_string()
    } else {
        format!(", {} connection(s)", set.connections)
    };
    // epoll is the default; the other interface is said where the connections are.
    let connections = if set.io == "io_uring" { format!("{connections} over io_uring") } else { connections };
    let warmup = if set.warmup_s > 0.0 { format!(" after {:.1} s of warm-up", set.warmup_s) } else { String::new() };
    let taken = if s.duration_s > s.planned_s * 1.01 + 0.01 {
        format!(" (planned {:.2} s: the calls took longer)", s.planned_s)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "Load         {model}, {} in flight{connections}; {:.2} s measured{taken}{warmup}",
        set.concurrency, s.duration_s
    );
    // Said when it is news: io_uring's way of posting completions here, or why auto fell back.
    if set.io == "io_uring" || (set.io == "epoll" && !set.io_why.starts_with("epoll, as asked")) && r.protocol != "h3" {
        let _ = writeln!(out, "I/O          {}", set.io_why);
    }
    let _ = writeln!(
        out,
        "Calls        {} ok, {} failed  ->  {:.1} calls/s",
        s.calls.ok, s.calls.errors, s.throughput_per_s
    );
    match &s.latency_us {
        Some(p) => {
            let _ = writeln!(out, "Latency      {}", spectrum(p));
        }
        None => {
            let _ = writeln!(out, "Latency      no call measured");
        }
    }
    if let Some(rate) = &s.rate {
        if let Some(p) = &s.latency_uncorrected_us {
            let _ = writeln!(
                out,
                "Uncorrected  {}  (from the actual start; the line above counts from the intended one)",
                spectrum(p)
            );
        }
        let _ = writeln!(
            out,
            "Rate         requested {:.1}/s, achieved {:.1}/s ({:+.2}%), {} late starts (> 1 ms)",
            rate.requested,
            rate.achieved,
            if rate.requested > 0.0 { (rate.achieved / rate.requested - 1.0) * 100.0 } else { 0.0 },
            rate.late_starts
        );
    }
    if r.protocol != "inproc" {
        let connect = s.connect_us.as_ref().map_or(String::new(), |c| {
            format!(", connect p50 {} p99 {} max {}", micros(c.p50 as f64), micros(c.p99 as f64), micros(c.max as f64))
        });
        let mut ended = String::new();
        if s.goaways > 0 {
            ended += &format!("; {} ended by the server (GOAWAY)", s.goaways);
        }
        if s.retries > 0 {
            ended += &format!("; {} retries (calls the server had not processed, sent again)", s.retries);
        }
        let f = &s.connect_failures;
        if f.total() > 0 {
            let kinds = [
                (f.refused, "refused"),
                (f.timed_out, "timed out"),
                (f.open_files, "out of file descriptors"),
                (f.local_ports, "out of local ports"),
                (f.handshake, "handshake failed"),
                (f.other, "other"),
            ];
            let named: Vec<String> = kinds.iter().filter(|(n, _)| *n > 0).map(|(n, k)| format!("{n} {k}")).collect();
            ended += &format!("; {} failed to open ({})", f.total(), named.join(", "));
        }
        let mut by = match (s.callers_connected_s, s.callers_never_connected) {
            (_, never) if never > 0 => format!("; {never} callers never connected"),
            (Some(t), _) => format!("; callers connected within {}", micros(t * 1e6)),
            (None, _) => String::new(),
        };
        if (s.callers_answered as usize) < set.concurrency {
            by += &format!("; {} of {} callers had a call answered", s.callers_answered, set.concurrency);
        }
        let _ = writeln!(out, "Connections  {} opened{connect}{by}{ended}", s.connections_opened);
        if let Some(cold) = &s.cold_calls {
            let phase = |name: &str, p: Option<Percentiles>| p.map(|p| format!("{name} {}", micros(p.p50 as f64)));
            let phases: Vec<String> = [
                phase("name lookup", cold.name_lookup_us),
                phase("TCP connect", cold.tcp_connect_us),
                phase("TLS handshake", cold.tls_handshake_us),
                phase("QUIC handshake", cold.quic_handshake_us),
            ]
            .into_iter()
            .flatten()
            .collect();
            let _ = writeln!(
                out,
                "Cold calls   {} opened their connection (p50): {}, then the call {}",
                cold.calls,
                phases.join(", "),
                micros(cold.rest_us.p50 as f64)
            );
        }
        let _ = writeln!(
            out,
            "Bytes/call   wire: sent {}, received {}; payload: sent {}, received {}",
            bytes(s.wire_bytes_per_call.sent),
            bytes(s.wire_bytes_per_call.received),
            bytes(s.payload_bytes_per_call.sent),
            bytes(s.payload_bytes_per_call.received)
        );
    }
    if let Some(stream) = &s.stream {
        let first = stream
            .first_answer_us
            .map_or("none".into(), |f| format!("p50 {} p99 {}", micros(f.p50 as f64), micros(f.p99 as f64)));
        let _ = writeln!(
            out,
            "Streams      {} (latency is a whole stream's): {:.1} messages sent, {:.1} received per stream; \
             {:.0}/s sent, {:.0}/s received; {} / {} payload per message; first answer {first}",
            stream.calls,
            stream.messages_per_call.sent,
            stream.messages_per_call.received,
            stream.messages_per_s.sent,
            stream.messages_per_s.received,
            bytes(stream.payload_bytes_per_message.sent),
            bytes(stream.payload_bytes_per_message.received),
        );
    }
    if let Some(q) = &s.quic {
        let _ = writeln!(
            out,
            "QUIC         the client sent {} packets, declared {} of them lost, and cut its congestion window {} times",
            q.packets_sent, q.packets_lost, q.congestion_events
        );
    }
    let _ = writeln!(out, "Client CPU   {:.2} µs per call", s.client_cpu_us_per_call);
    if !s.errors.is_empty() {
        let list: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "Errors       {}", list.join(", "));
    }
    for seg in &r.segments {
        let p = |f: fn(&Percentiles) -> u64| seg.latency_us.as_ref().map_or("-".into(), |l| micros(f(l) as f64));
        let _ = writeln!(
            out,
            "  {:>6.1}-{:<6.1} s  {:>9.1} -> {:>9.1}/s  achieved {:>9.1}/s  p50 {:>9}  p99 {:>9}  {} failed",
            seg.from_s,
            seg.to_s,
            seg.rate_from,
            seg.rate_to,
            seg.achieved_per_s,
            p(|l| l.p50),
            p(|l| l.p99),
            seg.calls_errors
        );
    }
    if let Some(search) = &r.search {
        let best = search.best_rate.map_or("none passed".into(), |b| format!("{b:.0} calls/s"));
        let _ = writeln!(
            out,
            "Search       {}: highest passing rate {best} (closed loop {:.0} calls/s, {} trials)",
            search.objective,
            search.closed_loop_max_per_s,
            search.trials.len()
        );
    }
    for (i, line) in callbench_load::threshold::lines(&r.thresholds).iter().enumerate() {
        let _ = writeln!(out, "{:<13}{line}", if i == 0 { "Thresholds" } else { "" });
    }
    if r.interrupted {
        let _ = writeln!(out, "Interrupted  the figures cover the part that ran");
    }
    out
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
