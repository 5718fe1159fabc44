//! What `callbench load` is asked, as one definition: the flags (clap), their defaults (`Default`
//! parses an empty command line) and the load model they make. `callbench run` fills in the same spec.

use crate::error::LoadError;
use crate::parse;
use crate::preset::PresetOptions;
use callbench_engine::net::socket::Io;
use callbench_engine::{Arrivals, Closed, ExecutionSegment, Load, Open, Pacer, RateShape, Segment, Shared, Stop};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Everything `callbench load` was asked. Its fields are the flags; checks that span several
/// flags are made when the target is built.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadSpec {
    /// What to load: http(s)://…, grpc(s)://…/package.Service/Method, raw://host:port[?size=N] (an echo), or inproc:WORKLOAD
    pub target: String,

    /// Calls in flight at most (closed loop: the number of callers) [default: 50; inproc: 1]
    #[arg(short = 'c', long)]
    pub concurrency: Option<usize>,
    /// Measured calls to make [default: 200 when no -z and no rate shape]
    #[arg(short = 'n', long = "calls")]
    pub calls: Option<u64>,
    /// Measure for this long (10s, 500ms, 2m); with -n, whichever ends first
    #[arg(short = 'z', long = "duration", value_parser = parse::duration)]
    pub duration: Option<Duration>,
    /// Run this long first and leave it out of the results
    #[arg(long, value_parser = parse::duration, default_value = "0s")]
    pub warmup: Duration,

    /// Open loop: start calls at this rate (calls/s) whatever the answers do
    #[arg(long, value_parser = parse::rate, allow_hyphen_values = true)]
    pub rate: Option<f64>,
    /// Open loop with Poisson arrivals (exponential gaps) instead of even spacing
    #[arg(long)]
    pub poisson: bool,
    /// Seed of the Poisson arrivals and of --template's random values
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Open loop following steps and ramps: RATE@DURATION and FROM..TO@DURATION, comma-separated
    /// (e.g. 0..2000@10s,2000@20s); reported per segment
    #[arg(long, value_name = "SHAPE")]
    pub rate_shape: Option<String>,
    /// Search the highest rate that keeps a latency objective (e.g. 'p99<10ms'): a closed-loop run, then
    /// open-loop trials of -z each [default 5s]
    #[arg(long = "slo", value_name = "OBJECTIVE")]
    pub objective: Option<String>,
    /// Start open-loop calls on the runtime's 1 ms timer (no busy waiting; starts up to ~1 ms late)
    #[arg(long)]
    pub coarse_timer: bool,

    /// Connections to keep open (HTTP/1.1: one per call in flight; HTTP/2 and gRPC: shared by streams) [default:
    /// HTTP/1.1 -c, HTTP/2 and gRPC 1]
    #[arg(long)]
    pub connections: Option<usize>,
    /// Concurrent streams per HTTP/2 connection (sets -c to connections × streams)
    #[arg(long)]
    pub streams: Option<usize>,
    /// Open a new connection for every call (as ab without -k); connect time and TLS handshake included
    #[arg(long, visible_alias = "disable-keepalive")]
    pub new_connection_per_call: bool,

    /// HTTP method [default: GET, or POST with -d]
    #[arg(short = 'X', long = "method")]
    pub method: Option<String>,
    /// Header (HTTP) or metadata (gRPC), 'Name: value'; repeatable ('Host: NAME' is also HTTP/2's :authority)
    #[arg(short = 'H', long = "header", value_parser = parse::header)]
    pub headers: Vec<(String, String)>,
    /// Request body (HTTP) or request message as JSON (gRPC); @FILE reads a file
    #[arg(short = 'd', long = "data")]
    pub data: Option<String>,
    /// An NDJSON file: each line one call's body (HTTP) or message as JSON (gRPC; a stream's messages as one
    /// array), used in turn (call i sends line i mod n)
    #[arg(long, value_name = "FILE", conflicts_with = "data")]
    pub data_lines: Option<PathBuf>,
    /// -d (or each line of --data-lines) is a template filled in per call: {{call}}, {{caller}}, {{int A B}},
    /// {{string N}}, {{uuid}} (random values from --seed)
    #[arg(long)]
    pub template: bool,
    /// REST: make the request from a gRPC method's google.api.http rule (--proto/--protoset), -d being its
    /// message as JSON: the rule's verb, its path filled from the message, its body and query
    #[arg(long, value_name = "METHOD")]
    pub http_rule: Option<String>,
    /// gRPC streams: how a client- or bidi-streaming call sends its messages (-d gives them: JSON
    /// values one after another, e.g. a file of one message per line, or one array): burst (all,
    /// then the request ends) or ping-pong (bidi: each after the answer to the one before) [default: burst]
    #[arg(long, value_parser = parse::pace, value_name = "PACE")]
    pub stream_pace: Option<callbench_engine::grpc::Pace>,
    /// HTTP/2: h2c with prior knowledge on http://, ALPN h2 on https://
    #[arg(long)]
    pub http2: bool,
    /// HTTP/3 over QUIC (UDP, TLS 1.3 inside the handshake), on https:// only
    #[arg(long, conflicts_with = "http2")]
    pub http3: bool,
    /// HTTP/3: send the request in the first flight (0-RTT) when a session ticket of an earlier connection
    /// allows it; needs --tls-resume, pays off with --new-connection-per-call. The server may replay it: GETs only
    #[arg(long)]
    pub zero_rtt: bool,
    /// gRPC: .proto file describing the method (repeatable); without --proto/--protoset, server reflection
    #[arg(long = "proto")]
    pub protos: Vec<PathBuf>,
    /// gRPC: where imports of --proto files are found (repeatable)
    #[arg(long = "import-path", short = 'I')]
    pub import_paths: Vec<PathBuf>,
    /// gRPC: a compiled FileDescriptorSet (protoc --descriptor_set_out --include_imports, buf build -o)
    #[arg(long)]
    pub protoset: Option<PathBuf>,
    /// A built-in workload's request for the target's protocol: auth, students, cars, life, life-run, life-setup, echo, records-upload, records-batch, records-converse, records-download
    #[arg(long)]
    pub workload: Option<String>,
    #[command(flatten)]
    pub preset: PresetOptions,
    /// Compress requests with gzip and accept gzip answers (Content-Encoding / grpc-encoding)
    #[arg(long)]
    pub gzip: bool,

    /// TLS: accept any server certificate (self-signed)
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// TLS: also trust this CA certificate (PEM)
    #[arg(long = "cacert")]
    pub ca_file: Option<PathBuf>,
    /// TLS: the client's certificate (PEM, its chain after it), for a server that requires one (mutual TLS); with --key
    #[arg(long = "cert", value_name = "FILE")]
    pub client_cert: Option<PathBuf>,
    /// TLS: the private key of --cert (PEM)
    #[arg(long = "key", value_name = "FILE")]
    pub client_key: Option<PathBuf>,
    /// TLS: the server name sent (SNI) and checked in its certificate, instead of the URL's host (an address, or a
    /// name that leads elsewhere)
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// TLS: offer only this version, 1.2 (a two-round-trip handshake) or 1.3 [default: both]
    #[arg(long)]
    pub tls_version: Option<callbench_engine::net::tls::TlsVersion>,
    /// TLS: resume sessions across connections (a returning client's shorter handshake) [default: a full handshake per connection]
    #[arg(long)]
    pub tls_resume: bool,
    /// A call taking longer fails as a timeout (0: never)
    #[arg(long, value_parser = parse::duration, default_value = "20s")]
    pub timeout: Duration,
    /// A connection not open within this (TCP and TLS handshakes) fails as `connect` (0: never)
    #[arg(long, value_parser = parse::duration, default_value = "10s")]
    pub connect_timeout: Duration,
    /// Start the callers over this span instead of all at once, with their first connections (caller i of N at
    /// i/N of it); give a --warmup as long to measure only once all have started
    #[arg(long, value_parser = parse::duration, default_value = "0s")]
    pub ramp: Duration,
    /// HTTP statuses that count as success, comma-separated [default: any 2xx]
    #[arg(long, value_delimiter = ',')]
    pub expect_status: Vec<u16>,
    /// The exact answer body (HTTP) or answer message as JSON (gRPC, compared as messages); @FILE reads a file
    #[arg(long)]
    pub expect_body: Option<String>,
    /// With --workload: check every answer is the reference implementation's answer
    #[arg(long)]
    pub check: bool,

    /// This machine's share of a run split across several, as fractions of it: FROM:TO (1/2:1 is the
    /// second of two halves). Callers, connections and -n are split as ⌊N·TO⌋ − ⌊N·FROM⌋; an
    /// open-loop schedule is dealt call by call, so the machines' calls together are the whole run's
    #[arg(long, value_name = "FROM:TO")]
    pub segment: Option<String>,
    /// Evenly spaced calls are dealt in rounds of this many (the same on every machine of a split: a
    /// multiple of every segment's denominators) [default: the lcm of this segment's two]
    #[arg(long, value_name = "N")]
    pub segment_stripes: Option<u64>,

    /// Kernel interface for the sockets: epoll, uring (io_uring: a pass's sends and receives in one system call), or auto (uring where the kernel allows it); $CALLBENCH_IO sets the default
    #[arg(long, default_value_t = io_from_env().unwrap_or_default())]
    pub io: Io,
    /// Client runtime threads (1 is the leanest; the benchmark pins it to one core)
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Look a target's name up once, before the run (as wrk and hey do) [default: per new connection, as a new
    /// client would: its time is the cold call's first phase]
    #[arg(long)]
    pub resolve_once: bool,
    /// Allow targets outside this machine (never used by callbench's own tests)
    #[arg(long)]
    pub allow_remote: bool,
    /// Where auth's users.json is for in-process calls (written if missing) [default: in the temp directory]
    #[arg(skip)]
    pub users_file: Option<PathBuf>,
}

impl Default for LoadSpec {
    /// What the flags give when none is set (and no target).
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            spec: LoadSpec,
        }
        <Flags as clap::Parser>::try_parse_from(["load", ""]).expect("the flags' defaults parse").spec
    }
}

/// `--io`'s default: epoll, unless CALLBENCH_IO names another (the tests run every load over
/// io_uring this way, and `callbench run` follows it too).
fn io_from_env() -> Result<Io, String> {
    std::env::var("CALLBENCH_IO").map_or(Ok(Io::default()), |v| v.parse::<Io>().map_err(String::from))
}

/// Default calls when neither `-n` nor `-z` nor a rate shape bounds the run (as hey and ghz).
pub const DEFAULT_CALLS: u64 = 200;
/// Default concurrency (as hey, oha and ghz).
pub const DEFAULT_CONCURRENCY: usize = 50;

/// The run's load model, as data.
pub struct Plan {
    pub load: Load,
    pub pacer_kind: PacerKind,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone)]
pub enum PacerKind {
    Closed,
    /// `share`: the part of the schedule this machine starts (the whole of it on one machine).
    Open {
        shape: RateShape,
        arrivals: Arrivals,
        share: ExecutionSegment,
    },
}

impl PacerKind {
    pub fn pacer(&self) -> Box<dyn Pacer> {
        match self {
            PacerKind::Closed => Box::new(Closed),
            PacerKind::Open { shape, arrivals, share } if share.is_whole() => {
                Box::new(Open::new(shape.clone(), *arrivals))
            }
            PacerKind::Open { shape, arrivals, share } => {
                let seed = match arrivals {
                    Arrivals::Poisson { seed } => Some(*seed),
                    Arrivals::Uniform => None,
                };
                Box::new(Shared::new(Open::new(shape.clone(), *arrivals), *share, seed))
            }
        }
    }
}

impl LoadSpec {
    /// The client's certificate and key (`--cert`, `--key`), both or neither.
    pub fn client_cert(&self) -> Result<Option<(PathBuf, PathBuf)>, LoadError> {
        self.cert_and_key().map_err(LoadError::Settings)
    }

    fn cert_and_key(&self) -> Result<Option<(PathBuf, PathBuf)>, String> {
        match (&self.client_cert, &self.client_key) {
            (Some(cert), Some(key)) => Ok(Some((cert.clone(), key.clone()))),
            (None, None) => Ok(None),
            _ => Err("--cert and --key go together: the certificate and its private key".into()),
        }
    }

    /// Checks of single flags that clap's types do not make.
    pub fn validate(&self) -> Result<(), LoadError> {
        self.check_flags().map_err(LoadError::Settings)
    }

    fn check_flags(&self) -> Result<(), String> {
        io_from_env().map_err(|e| format!("CALLBENCH_IO: {e}"))?;
        if self.concurrency == Some(0) {
            return Err("-c must be at least 1".into());
        }
        if self.calls == Some(0) {
            return Err("-n must be at least 1".into());
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return Err("-z must be longer than 0".into());
        }
        if self.connections == Some(0) || self.streams == Some(0) {
            return Err("--connections and --streams must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        self.segment().map(|_| ())
    }

    /// The request body of `-d`: its text, or the file it names with `@FILE` (read when the target is built).
    pub fn body(&self) -> Result<Option<Vec<u8>>, LoadError> {
        self.data.as_deref().map(|d| parse::bytes(d, "-d")).transpose()
    }

    /// The answer `--expect-body` expects, likewise.
    pub fn expected_body(&self) -> Result<Option<Vec<u8>>, LoadError> {
        self.expect_body.as_deref().map(|d| parse::bytes(d, "--expect-body")).transpose()
    }

    /// The per-call timeout (None: `--timeout 0`, never).
    pub fn timeout(&self) -> Option<Duration> {
        (!self.timeout.is_zero()).then_some(self.timeout)
    }

    /// The connect timeout (None: `--connect-timeout 0`, never).
    pub fn connect_timeout(&self) -> Option<Duration> {
        (!self.connect_timeout.is_zero()).then_some(self.connect_timeout)
    }

    /// This machine's share of the run (`--segment`): the whole run when none is given.
    pub fn share(&self) -> Result<ExecutionSegment, LoadError> {
        self.segment().map_err(LoadError::Settings)
    }

    fn segment(&self) -> Result<ExecutionSegment, String> {
        match &self.segment {
            Some(text) => ExecutionSegment::parse(text, self.segment_stripes).map_err(String::from),
            None if self.segment_stripes.is_some() => Err("--segment-stripes goes with --segment".into()),
            None => Ok(ExecutionSegment::WHOLE),
        }
    }

    /// `n` callers, connections or calls of the whole run split to this machine's share; an error
    /// when the share gets none of them.
    pub fn split(&self, n: usize, what: &str) -> Result<usize, LoadError> {
        self.split_share(n, what).map_err(LoadError::Settings)
    }

    fn split_share(&self, n: usize, what: &str) -> Result<usize, String> {
        let share = self.share()?;
        let mine = share.share(n as u64) as usize;
        if mine == 0 {
            return Err(format!(
                "segment {} of {what} {n} gets none of them: give this machine a larger share or raise {what}",
                share.describe()
            ));
        }
        Ok(mine)
    }

    pub fn arrivals(&self) -> Arrivals {
        if self.poisson {
            Arrivals::Poisson { seed: self.seed }
        } else {
            Arrivals::Uniform
        }
    }

    /// The stop condition: `-n`, `-z`, or the default count; a rate shape bounds itself. With
    /// `--segment`, this machine's share of the calls.
    pub fn stop(&self) -> Stop {
        let calls = match (self.calls, self.duration, &self.rate_shape) {
            (None, None, None) => Some(DEFAULT_CALLS),
            (calls, _, _) => calls,
        };
        let calls = calls.map(|n| self.share().map_or(n, |s| s.share(n)));
        Stop { calls, duration: self.duration, warmup: self.warmup }
    }

    /// The command line of `callbench load` that makes this spec again (its segment aside: a
    /// coordinator that splits a run sets each machine's own; `users_file` is not a flag).
    pub fn to_flags(&self) -> Vec<String> {
        // A target that looks like a flag goes last, after `--` (fuzz/fuzz_targets/load_flags.rs).
        let dashed = self.target.starts_with('-');
        let mut f = if dashed { vec![] } else { vec![self.target.clone()] };
        // `--flag=value`, one argument: a value that starts with '-' (`-d -z`) would be read as a
        // flag of its own (found by fuzz/fuzz_targets/load_flags.rs).
        let mut add = |flag: &str, value: Option<String>| {
            if let Some(v) = value {
                f.push(format!("{flag}={v}"));
            }
        };
        let time = |d: Duration| format!("{}us", d.as_micros());
        add("--concurrency", self.concurrency.map(|c| c.to_string()));
        add("--calls", self.calls.map(|n| n.to_string()));
        add("--duration", self.duration.map(time));
        add("--warmup", Some(time(self.warmup)));
        add("--rate", self.rate.map(|r| r.to_string()));
        add("--seed", Some(self.seed.to_string()));
        add("--rate-shape", self.rate_shape.clone());
        add("--slo", self.objective.clone());
        add("--connections", self.connections.map(|c| c.to_string()));
        add("--streams", self.streams.map(|s| s.to_string()));
        add("--method", self.method.clone());
        for (name, value) in &self.headers {
            add("--header", Some(format!("{name}: {value}")));
        }
        add("--data", self.data.clone());
        add("--data-lines", self.data_lines.as_ref().map(|p| p.display().to_string()));
        add("--http-rule", self.http_rule.clone());
        add("--stream-pace", self.stream_pace.map(|p| parse::pace_name(p).to_string()));
        for path in &self.protos {
            add("--proto", Some(path.display().to_string()));
        }
        for path in &self.import_paths {
            add("--import-path", Some(path.display().to_string()));
        }
        add("--protoset", self.protoset.as_ref().map(|p| p.display().to_string()));
        add("--workload", self.workload.clone());
        add("--payload-size", Some(self.preset.payload_size.to_string()));
        add("--ntimes", Some(self.preset.ntimes.to_string()));
        add("--user-id", Some(self.preset.user_id.to_string()));
        add("--records", Some(self.preset.records.to_string()));
        add("--cacert", self.ca_file.as_ref().map(|p| p.display().to_string()));
        add("--cert", self.client_cert.as_ref().map(|p| p.display().to_string()));
        add("--key", self.client_key.as_ref().map(|p| p.display().to_string()));
        add("--tls-server-name", self.tls_server_name.clone());
        add("--tls-version", self.tls_version.map(|v| v.to_string()));
        add("--timeout", Some(time(self.timeout)));
        add("--connect-timeout", Some(time(self.connect_timeout)));
        add("--ramp", Some(time(self.ramp)));
        let statuses: Vec<String> = self.expect_status.iter().map(|s| s.to_string()).collect();
        add("--expect-status", (!statuses.is_empty()).then(|| statuses.join(",")));
        add("--expect-body", self.expect_body.clone());
        add("--threads", Some(self.threads.to_string()));
        add("--io", Some(self.io.to_string()));
        for (set, flag) in [
            (self.poisson, "--poisson"),
            (self.coarse_timer, "--coarse-timer"),
            (self.new_connection_per_call, "--new-connection-per-call"),
            (self.http2, "--http2"),
            (self.http3, "--http3"),
            (self.zero_rtt, "--zero-rtt"),
            (self.gzip, "--gzip"),
            (self.insecure, "--insecure"),
            (self.tls_resume, "--tls-resume"),
            (self.check, "--check"),
            (self.template, "--template"),
            (self.resolve_once, "--resolve-once"),
            (self.allow_remote, "--allow-remote"),
        ] {
            if set {
                f.push(flag.to_string());
            }
        }
        if dashed {
            f.extend(["--".to_string(), self.target.clone()]);
        }
        f
    }

    /// How long the run is planned to take, warm-up included: its duration, or its rate shape's
    /// end; None for a run bounded by calls alone (or a shape that does not parse).
    pub fn planned_length(&self) -> Option<Duration> {
        let length = match (self.duration, &self.rate_shape) {
            (Some(d), _) => d,
            (None, Some(text)) => parse::rate_shape(text).ok()?.0.end()?,
            (None, None) => return None,
        };
        Some(length + self.warmup)
    }

    /// The load model for a run at `rate` (None: closed loop, or the spec's own rate/shape).
    pub fn plan(&self, concurrency: usize, rate: Option<f64>, cancel: Arc<AtomicBool>) -> Result<Plan, LoadError> {
        self.load_model(concurrency, rate, cancel).map_err(LoadError::Settings)
    }

    fn load_model(&self, concurrency: usize, rate: Option<f64>, cancel: Arc<AtomicBool>) -> Result<Plan, String> {
        let mut load = Load::new(concurrency, self.stop());
        load.timeout = self.timeout();
        load.ramp = self.ramp;
        load.new_connection_per_call = self.new_connection_per_call;
        load.cancel = cancel;
        load.precise_timer = !self.coarse_timer;
        let share = self.share()?;
        if self.stop().calls == Some(0) {
            return Err(format!(
                "segment {} of -n {} gets no calls",
                share.describe(),
                self.calls.unwrap_or(DEFAULT_CALLS)
            ));
        }
        let arrivals = self.arrivals();
        let (pacer_kind, segments) = match (rate.or(self.rate), &self.rate_shape) {
            (Some(_), Some(_)) => return Err("give --rate or --rate-shape, not both".into()),
            (Some(r), None) if r <= 0.0 => return Err("--rate must be above 0 calls/s".into()),
            (Some(r), None) => (PacerKind::Open { shape: RateShape::constant(r)?, arrivals, share }, vec![]),
            (None, Some(text)) => {
                let (shape, segments) = parse::rate_shape(text)?;
                (PacerKind::Open { shape, arrivals, share }, segments)
            }
            (None, None) => (PacerKind::Closed, vec![]),
        };
        Ok(Plan { load, pacer_kind, segments })
    }
}

#[cfg(test)]
mod tests;
