//! `callbench load`: flags (as hey, oha and ghz users expect) into a load spec; run; print and write.

use callbench_harness::load::output::{self, Format};
use callbench_harness::load::{parse, preset, LoadSpec};
use clap::Parser;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(after_help = "TARGETS
  http://HOST:PORT/PATH, https://…         HTTP/1.1, or HTTP/2 with --http2 (h2c prior knowledge, or ALPN h2 over TLS)
  grpc://HOST:PORT/package.Service/Method  gRPC (grpcs:// over TLS); unary and server-streaming methods (a call is the
                                           whole stream); client- and bidi-streaming are not supported
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
    /// What to load: http(s)://…, grpc(s)://…/package.Service/Method, or inproc:WORKLOAD
    target: String,

    /// Calls in flight at most (closed loop: the number of callers) [default: 50; inproc: 1]
    #[arg(short = 'c', long)]
    concurrency: Option<usize>,
    /// Measured calls to make [default: 200 when no -z and no rate shape]
    #[arg(short = 'n', long = "calls")]
    calls: Option<u64>,
    /// Measure for this long (10s, 500ms, 2m); with -n, whichever ends first
    #[arg(short = 'z', long = "duration", value_parser = parse::duration)]
    duration: Option<std::time::Duration>,
    /// Run this long first and leave it out of the results
    #[arg(long, value_parser = parse::duration, default_value = "0s")]
    warmup: std::time::Duration,

    /// Open loop: start calls at this rate (calls/s) whatever the answers do
    #[arg(long, value_parser = parse::rate, allow_hyphen_values = true)]
    rate: Option<f64>,
    /// Open loop with Poisson arrivals (exponential gaps) instead of even spacing
    #[arg(long)]
    poisson: bool,
    /// Seed of the Poisson arrivals
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Open loop following steps and ramps: RATE@DURATION and FROM..TO@DURATION, comma-separated
    /// (e.g. 0..2000@10s,2000@20s); reported per segment
    #[arg(long, value_name = "SHAPE")]
    rate_shape: Option<String>,
    /// Search the highest rate that keeps a latency objective (e.g. 'p99<10ms'): a closed-loop run, then
    /// open-loop trials of -z each [default 5s]
    #[arg(long, value_name = "OBJECTIVE")]
    slo: Option<String>,
    /// Start open-loop calls on the runtime's 1 ms timer (no busy waiting; starts up to ~1 ms late)
    #[arg(long)]
    coarse_timer: bool,

    /// Connections to keep open (HTTP/1.1: one per call in flight; HTTP/2 and gRPC: shared by streams) [default:
    /// HTTP/1.1 -c, HTTP/2 and gRPC 1]
    #[arg(long)]
    connections: Option<usize>,
    /// Concurrent streams per HTTP/2 connection (sets -c to connections × streams)
    #[arg(long)]
    streams: Option<usize>,
    /// Open a new connection for every call (as ab without -k); connect time and TLS handshake included
    #[arg(long, visible_alias = "disable-keepalive")]
    new_connection_per_call: bool,

    /// HTTP method [default: GET, or POST with -d]
    #[arg(short = 'X', long = "method")]
    method: Option<String>,
    /// Header (HTTP) or metadata (gRPC), 'Name: value'; repeatable
    #[arg(short = 'H', long = "header", value_parser = parse::header)]
    headers: Vec<(String, String)>,
    /// Request body (HTTP) or request message as JSON (gRPC); @FILE reads a file
    #[arg(short = 'd', long = "data")]
    data: Option<String>,
    /// HTTP/2: h2c with prior knowledge on http://, ALPN h2 on https://
    #[arg(long)]
    http2: bool,
    /// gRPC: .proto file describing the method (repeatable); without --proto/--protoset, server reflection
    #[arg(long = "proto")]
    protos: Vec<PathBuf>,
    /// gRPC: where imports of --proto files are found (repeatable)
    #[arg(long = "import-path", short = 'I')]
    import_paths: Vec<PathBuf>,
    /// gRPC: a compiled FileDescriptorSet (protoc --descriptor_set_out --include_imports, buf build -o)
    #[arg(long)]
    protoset: Option<PathBuf>,
    /// A built-in workload's request for the target's protocol: auth, students, cars, life, life-setup, echo
    #[arg(long)]
    workload: Option<String>,
    /// echo: about this many bytes of JSON per message
    #[arg(long, default_value_t = 1000)]
    payload_size: usize,
    /// life: generations computed per call
    #[arg(long, default_value_t = 1)]
    ntimes: u32,
    /// auth: the user id to authenticate
    #[arg(long, default_value_t = 4242)]
    user_id: i64,
    /// Compress requests with gzip and accept gzip answers (Content-Encoding / grpc-encoding)
    #[arg(long)]
    gzip: bool,

    /// TLS: accept any server certificate (self-signed)
    #[arg(short = 'k', long)]
    insecure: bool,
    /// TLS: also trust this CA certificate (PEM)
    #[arg(long)]
    cacert: Option<PathBuf>,
    /// A call taking longer fails as a timeout (0: never)
    #[arg(long, value_parser = parse::duration, default_value = "20s")]
    timeout: std::time::Duration,
    /// HTTP statuses that count as success, comma-separated [default: any 2xx]
    #[arg(long, value_delimiter = ',')]
    expect_status: Vec<u16>,
    /// The exact answer body (HTTP) or answer message as JSON (gRPC, compared as messages); @FILE reads a file
    #[arg(long)]
    expect_body: Option<String>,
    /// With --workload: check every answer is the reference implementation's answer
    #[arg(long)]
    check: bool,

    /// Client runtime threads (1 is the leanest; the benchmark pins it to one core)
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Output on stdout: text, json, csv or hdr (the percentile distribution in ms)
    #[arg(short = 'o', long = "output", default_value = "text")]
    output: Format,
    /// Write the output to this file instead of stdout (the text summary is still printed unless -q)
    #[arg(long = "out")]
    out: Option<PathBuf>,
    /// No progress bar, no summary on stdout when writing to --out
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Allow targets outside this machine (never used by callbench's own tests)
    #[arg(long)]
    allow_remote: bool,
}

fn read_arg(value: &Option<String>, what: &str) -> anyhow::Result<Option<Vec<u8>>> {
    Ok(match value.as_deref() {
        None => None,
        Some(v) => match v.strip_prefix('@') {
            Some(file) => {
                Some(std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {what} file {file}: {e}"))?)
            }
            None => Some(v.as_bytes().to_vec()),
        },
    })
}

impl Args {
    fn spec(&self) -> anyhow::Result<LoadSpec> {
        if self.concurrency == Some(0) {
            anyhow::bail!("-c must be at least 1");
        }
        if self.calls == Some(0) {
            anyhow::bail!("-n must be at least 1");
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            anyhow::bail!("-z must be longer than 0");
        }
        if self.connections == Some(0) || self.streams == Some(0) {
            anyhow::bail!("--connections and --streams must be at least 1");
        }
        Ok(LoadSpec {
            target: self.target.clone(),
            method: self.method.clone(),
            headers: self.headers.clone(),
            body: read_arg(&self.data, "-d")?,
            http2: self.http2,
            protos: self.protos.clone(),
            import_paths: self.import_paths.clone(),
            protoset: self.protoset.clone(),
            workload: self.workload.clone(),
            preset: preset::PresetOptions {
                payload_size: self.payload_size,
                ntimes: self.ntimes,
                user_id: self.user_id,
            },
            concurrency: self.concurrency,
            calls: self.calls,
            duration: self.duration,
            warmup: self.warmup,
            rate: self.rate,
            poisson: self.poisson,
            seed: self.seed,
            rate_shape: self.rate_shape.clone(),
            objective: self.slo.clone(),
            connections: self.connections,
            streams: self.streams,
            new_connection_per_call: self.new_connection_per_call,
            gzip: self.gzip,
            insecure: self.insecure,
            ca_file: self.cacert.clone(),
            timeout: (!self.timeout.is_zero()).then_some(self.timeout),
            expect_status: self.expect_status.clone(),
            expect_body: read_arg(&self.expect_body, "--expect-body")?,
            check: self.check,
            precise_timer: !self.coarse_timer,
            allow_remote: self.allow_remote,
            threads: self.threads,
        })
    }
}

/// Runs the load; Ctrl-C (SIGINT) or SIGTERM ends it early, and what was measured is still
/// printed and written. Exit code: 0, or the signal's (130/143) when interrupted.
pub async fn run(args: Args) -> anyhow::Result<i32> {
    let spec = args.spec()?;
    if let Some(path) = &args.out {
        // Fail now, not after a long run, if the file cannot be written: a probe beside it, so an
        // earlier result in it survives a run that fails.
        let probe = partial(path);
        std::fs::write(&probe, b"").map_err(|e| anyhow::anyhow!("cannot write {}: {e}", probe.display()))?;
        let _ = std::fs::remove_file(&probe);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let signal = cancel_on_signals(cancel.clone());
    let (report, result) =
        callbench_harness::load::execute(&spec, cancel.clone(), args.quiet).await.map_err(|e| anyhow::anyhow!(e))?;
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
    if report.summary.calls.ok == 0 && report.summary.calls.errors > 0 && !args.quiet {
        eprintln!("callbench: warning: every call failed ({:?})", report.summary.errors);
    }
    Ok(if cancel.load(Ordering::Relaxed) { signal.code() } else { 0 })
}

/// `FILE.partial` beside `FILE`.
fn partial(path: &std::path::Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// Writes through a temporary file and a rename, so the file is never half-written.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    callbench_files::write_atomic(path, bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
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
