//! `callbench load`: flags (as hey, oha and ghz users expect) into a load spec; run; print and write.

mod output;
mod progress;

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
  callbench load --slo 'p99<10ms' -z 5s --workload students http://127.0.0.1:8080")]
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
}

/// Runs the load; Ctrl-C (SIGINT) or SIGTERM ends it early, and what was measured is still
/// printed and written. Exit code: 0, or the signal's (130/143) when interrupted.
pub async fn run(args: Args) -> anyhow::Result<i32> {
    let mut spec = args.spec;
    if spec.target.starts_with("inproc:") {
        // In a checkout, the users.json every server reads; elsewhere the load crate's default.
        spec.users_file = super::repo().ok().and_then(|r| r.users_file().ok());
    }
    if let Some(path) = &args.out {
        // Fail now, not after a long run, if the file cannot be written: a probe with a temporary
        // file of ours beside it, so an earlier result in it (and any file of the user's beside
        // it) survives a run that fails.
        callbench_atomic_file::probe_writable(path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
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
    let (report, result) =
        callbench_load::execute(&spec, cancel.clone(), &watch).await.map_err(|e| anyhow::anyhow!(e))?;
    let rendered = output::render(&report, &result.stats.latency_us, args.output);
    match &args.out {
        Some(path) => {
            write_atomically(path, rendered.as_bytes())?;
            if !args.quiet {
                print!("{}", output::text(&report));
            }
        }
        None => print!("{rendered}"),
    }
    let calls = report.summary.calls.ok + report.summary.calls.errors;
    if let Some(problem) = callbench_load::startup::problem(&result.info, report.settings.concurrency, calls) {
        // What was measured is printed and written above; the run still did not hold its load.
        eprintln!("callbench: error: {problem}");
        return Ok(1);
    }
    if report.summary.calls.ok == 0 && report.summary.calls.errors > 0 && !args.quiet {
        eprintln!("callbench: warning: every call failed ({:?})", report.summary.errors);
    }
    Ok(if cancel.load(Ordering::Relaxed) { signal.code() } else { 0 })
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
