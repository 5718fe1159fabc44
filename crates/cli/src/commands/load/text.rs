//! The load report as text for people: one section per function, in the order they print.

use callbench_engine::stats::Percentiles;
use callbench_load::LoadReport;
use std::fmt::Write;

pub fn text(r: &LoadReport) -> String {
    let mut out = String::new();
    rate_not_kept(&mut out, r);
    target_and_load(&mut out, r);
    calls_and_latency(&mut out, r);
    connections_and_bytes(&mut out, r);
    streams_and_quic(&mut out, r);
    cost_and_errors(&mut out, r);
    search_and_verdicts(&mut out, r);
    out
}

/// First, before any figure: a rate asked for and not kept.
fn rate_not_kept(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
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
}

/// What was called, and how: the model, the connections, the window, the I/O.
fn target_and_load(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
    let set = &r.settings;
    let tls = if r.tls { " over TLS" } else { "" };
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
}

/// Calls, their latency (corrected, and uncorrected in open loop) and the rate kept.
fn calls_and_latency(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
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
}

/// Connections opened and how they ended, the cold calls' phases, bytes per call.
fn connections_and_bytes(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
    let set = &r.settings;
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
}

/// Streams' messages, and what QUIC's congestion control did.
fn streams_and_quic(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
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
}

/// The client's CPU per call, failures by kind, and the rate shape's segments.
fn cost_and_errors(out: &mut String, r: &LoadReport) {
    let s = &r.summary;
    let _ = writeln!(out, "Client CPU   {:.2} µs per call", s.client_cpu_us_per_call);
    if !s.errors.is_empty() {
        let list: Vec<String> =
            s.errors.iter().map(|(k, n)| format!("{} {n}", callbench_load::report::error_text(k))).collect();
        let said = s.first_failure.as_deref().map_or(String::new(), |f| format!("; the first said {f}"));
        let _ = writeln!(out, "Errors       {}{said}", list.join(", "));
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
}

/// The `--slo` search, the thresholds, and whether the run was cut short.
fn search_and_verdicts(out: &mut String, r: &LoadReport) {
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
}

/// µs as a short human figure: 812 µs, 1.23 ms, 2.50 s.
fn micros(us: f64) -> String {
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
