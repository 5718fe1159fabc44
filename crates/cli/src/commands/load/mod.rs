//! `callbench load`: flags (as hey, oha and ghz users expect) into a load spec; run; print and write.

mod output;
mod progress;
mod text;

use callbench_load::threshold::{self, Measured, Threshold};
use callbench_load::LoadSpec;
use clap::Parser;
use output::Format;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(after_help = "TARGETS
  http://HOST:PORT/PATH, https://…         HTTP/1.1, or HTTP/2 with --http2 (h2c prior knowledge, or ALPN h2 over TLS),
                                           or HTTP/3 with --http3 (https:// only: QUIC on the same port, over UDP)
  grpc://HOST:PORT/package.Service/Method  gRPC (grpcs:// over TLS); every kind of method: unary, server, client and
                                           bidi streaming (a call is the whole stream; -d gives a stream's messages)
  inproc:WORKLOAD                          a built-in workload called in this process: the baseline with no boundary

Only loopback targets (127.0.0.0/8, ::1) are allowed unless --allow-remote is given.
Latency is counted from each call's intended start (coordinated-omission corrected); in open loop the latency from
the actual start is reported beside it. Precise open-loop timing keeps the client thread busy between calls (its CPU
per call is then an upper bound); --coarse-timer trades that for up to ~1 ms of start jitter.

EXAMPLES
  callbench load -c 50 -z 10s http://127.0.0.1:8080/students
  callbench load --workload life --ntimes 10 --rate 2000 -z 10s grpc://127.0.0.1:50051
  callbench load -d '{\"name\": \"x\"}' --proto api.proto grpc://127.0.0.1:9000/pkg.Greeter/SayHello
  callbench load --http2 --connections 2 --streams 25 --workload echo --payload-size 10000 http://127.0.0.1:8080
  callbench load --slo 'p99<10ms' -z 5s --workload students http://127.0.0.1:8080
  callbench load -z 10s --threshold 'p99<200ms' --threshold 'errors<0.1%' http://127.0.0.1:8080/students

EXIT STATUS
  0 the run held its load and met every threshold; 99 a threshold was crossed (each is printed, met or crossed,
  with its measured value); 1 an error, or no call succeeded (the report is still printed and written);
  2 bad arguments; 130/143 interrupted by SIGINT/SIGTERM (what ran is still printed and written).")]
pub struct Args {
    #[command(flatten)]
    pub spec: LoadSpec,
    /// Output on stdout: text, json, csv or hdr (the percentile distribution in ms)
    #[arg(short = 'o', long = "output", default_value = "text")]
    output: Format,
    /// Write the output to this file instead of stdout (the text summary is still printed unless -q)
    #[arg(long = "out")]
    out: Option<PathBuf>,
    /// No progress bar, no summary on stdout when writing to --out
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Keep idle CPUs from sleeping while the load runs (/dev/cpu_dma_latency held at 0, as `callbench run`
    /// does): one call at a time otherwise also pays for waking a sleeping CPU, on a VM through the hypervisor
    #[arg(long)]
    keep_cpus_awake: bool,
    /// A condition the run must meet, for CI (repeatable): pN, mean or max latency with a unit ('p99<200ms'),
    /// errors as a share or a count ('errors<0.1%', 'errors<=5'), 'calls_per_s>5000'; operators <, <=, >, >=.
    /// A crossed one exits 99
    #[arg(long = "threshold", value_name = "CONDITION", value_parser = threshold::parse)]
    thresholds: Vec<Threshold>,
    /// Push the figures to a Prometheus remote-write receiver, http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH]
    /// (no path: /api/v1/write): calls, errors by kind, bytes and CPU per call, and the latency as a native
    /// histogram converted from the HDR histogram (a quantile within 0.28% of callbench's own)
    #[arg(long = "out-prometheus", value_name = "URL")]
    out_prometheus: Option<String>,
    #[command(flatten)]
    prometheus: super::prometheus::TextAndLabels,
}

/// Runs the load; Ctrl-C (SIGINT) or SIGTERM ends it early, and what was measured is still
/// printed and written. Exit code: 0; 99 when a `--threshold` is crossed; 1 when no call
/// succeeded; the signal's (130/143) when interrupted.
pub async fn run(args: Args) -> anyhow::Result<i32> {
    let mut spec = args.spec;
    if spec.target.starts_with("inproc:") {
        // The users.json every server reads (an installed callbench writes it in its own folder);
        // the load crate's default if neither can be written.
        spec.users_file = super::repo_or_standalone().ok().and_then(|r| r.users_file().ok());
    }
    if let Some(path) = &args.out {
        // Fail now, not after a long run, if the file cannot be written: a probe with a temporary
        // file of ours beside it, so an earlier result in it (and any file of the user's beside
        // it) survives a run that fails.
        callbench_atomic_file::probe_writable(path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let sink = super::prometheus::Sink::new(args.out_prometheus.as_deref(), &args.prometheus)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let signal = cancel_on_signals(cancel.clone());
    // Released when this returns (or the process ends: the kernel drops it with the file). Taken once
    // Ctrl-C is handled, so that a run seen holding it ends as an interrupted run.
    let _awake = args.keep_cpus_awake.then(|| {
        let (awake, idle) = callbench_machine::idle_hold::take(false);
        if let Some(warning) = callbench_machine::idle_hold::warning(&idle) {
            eprintln!("callbench: {warning}");
        }
        awake
    });
    let watch = progress::Bar::new(args.quiet);
    let (mut report, result) =
        callbench_load::execute(&spec, cancel.clone(), &watch).await.map_err(|e| anyhow::anyhow!(e))?;
    let measured = Measured {
        latency_us: &result.stats.latency_us,
        ok: report.summary.calls.ok,
        errors: report.summary.calls.errors,
        calls_per_s: report.summary.throughput_per_s,
    };
    report.thresholds = args.thresholds.iter().map(|t| t.judge(&measured)).collect();
    let rendered = output::render(&report, &result.stats.latency_us, args.output);
    match &args.out {
        Some(path) => {
            write_atomically(path, rendered.as_bytes())?;
            if !args.quiet {
                print!("{}", text::text(&report));
            }
        }
        None => print!("{rendered}"),
    }
    let published = match &sink {
        Some(sink) => sink.publish(&prometheus_points(&report, &result.stats.latency_us, &sink.labels), args.quiet),
        None => Ok(()),
    };
    let calls = report.summary.calls.ok + report.summary.calls.errors;
    if let Some(problem) = callbench_load::startup::problem(&result.info, report.settings.concurrency, calls) {
        // What was measured is printed and written above; the run still did not hold its load.
        eprintln!("callbench: error: {problem}");
        return Ok(1);
    }
    if cancel.load(Ordering::Relaxed) {
        return Ok(signal.code());
    }
    if report.summary.calls.ok == 0 {
        // The report above still holds what happened (every failure counted by kind).
        let failed = match report.summary.calls.errors {
            0 => "no call was made".to_string(),
            n => {
                let s = &report.summary;
                format!(
                    "every call failed: {n} ({})",
                    callbench_load::report::failures_text(&s.errors, s.first_failure.as_deref())
                )
            }
        };
        eprintln!("callbench: error: no call succeeded: {failed}");
        return Ok(1);
    }
    if let Err(e) = published {
        // What was measured is printed and written; where it was to go did not take it.
        eprintln!("callbench: error: {e}");
        return Ok(1);
    }
    let crossed: Vec<String> =
        report.thresholds.iter().filter(|j| !j.met).map(|j| format!("{} ({})", j.threshold, j.measured_text)).collect();
    if !crossed.is_empty() {
        eprintln!("callbench: threshold crossed: {}", crossed.join(", "));
        return Ok(threshold::CROSSED_EXIT);
    }
    Ok(0)
}

/// The run's figures as series labelled by target, protocol and workload (and the user's labels).
fn prometheus_points(
    report: &callbench_load::LoadReport,
    latency_us: &hdrhistogram::Histogram<u64>,
    extra: &callbench_export::Labels,
) -> Vec<callbench_export::Point> {
    let s = &report.summary;
    let mut labels: callbench_export::Labels =
        vec![("target".into(), report.target.clone()), ("protocol".into(), report.protocol.to_string())];
    if let Some(workload) = &report.workload {
        labels.push(("workload".into(), workload.clone()));
    }
    labels.extend(extra.iter().cloned());
    let figures = callbench_export::series::Figures {
        latency_us: Some(latency_us),
        calls_ok: s.calls.ok,
        calls_errors: s.calls.errors,
        errors: s.errors.clone(),
        duration_s: s.duration_s,
        throughput_per_s: s.throughput_per_s,
        wire_sent_per_call: s.wire_bytes_per_call.sent,
        wire_received_per_call: s.wire_bytes_per_call.received,
        payload_sent_per_call: s.payload_bytes_per_call.sent,
        payload_received_per_call: s.payload_bytes_per_call.received,
        client_cpu_us_per_call: s.client_cpu_us_per_call,
        server_cpu_us_per_call: None,
    };
    callbench_export::series::points(&labels, &figures)
}

/// Writes through a temporary file and a rename, so the file is never half-written.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    callbench_atomic_file::write_atomic(path, bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// The first SIGINT/SIGTERM cancels the run (calls in flight finish); a second one exits at once.
struct SignalCode(Arc<std::sync::atomic::AtomicI32>);

impl SignalCode {
    fn code(&self) -> i32 {
        self.0.load(Ordering::Relaxed)
    }
}

fn cancel_on_signals(cancel: Arc<AtomicBool>) -> SignalCode {
    use tokio::signal::unix::{signal, SignalKind};
    let code = Arc::new(std::sync::atomic::AtomicI32::new(0));
    for (kind, number) in [(SignalKind::interrupt(), 130), (SignalKind::terminate(), 143)] {
        if let Ok(mut stream) = signal(kind) {
            let (cancel, code) = (cancel.clone(), code.clone());
            tokio::spawn(async move {
                stream.recv().await;
                code.store(number, Ordering::Relaxed);
                cancel.store(true, Ordering::Relaxed);
                eprintln!("\ncallbench: interrupted, finishing the calls in flight (again to quit at once)");
                stream.recv().await;
                std::process::exit(number);
            });
        }
    }
    SignalCode(code)
}
