//! From a spec to a ready target: URL and flags checked, names resolved under the loopback rule,
//! the server probed once (so an unreachable target is one clear error, not a run of failures),
//! the request prepared once.

use crate::data::{self, DataUsed};
use crate::error::LoadError;
use crate::grpc_method::{expected_message_check, request_messages, resolve_method};
use crate::parse::{self, TargetUrl};
use crate::preset::{self, Preset};
use crate::rest_request::{rest_request, with_flags};
use crate::sink::{RunResult, RunSink};
use crate::spec::{LoadSpec, Plan, DEFAULT_CONCURRENCY};
use crate::watch::{RunView, Watch};
use callbench_engine::call_data::CallData;
use callbench_engine::grpc::{Grpc, GrpcCall, Shape};
use callbench_engine::h3pool::{H3Options, H3Pool, QuicClient};
use callbench_engine::http1::Http1;
use callbench_engine::http2::Http2;
use callbench_engine::http3::Http3;
use callbench_engine::inproc::InProc;
use callbench_engine::net::failures::ConnectFailures;
use callbench_engine::net::{self, tls, Endpoint};
use callbench_engine::raw::Raw;
use callbench_engine::request::{BodyCheck, Expect, HttpRequest};
use callbench_engine::{Connected, ErrorKind, QuicCounts, Reply, Target, WireTotals};
use callbench_primitives::boxed::Boxed;
use std::sync::Arc;
use std::time::Duration;

/// A prepared target, shared by the runs of a search.
pub enum AnyTarget {
    Http1(Arc<Http1>),
    Http2(Arc<Http2>),
    Http3(Arc<Http3>),
    Grpc(Arc<Grpc>),
    InProc(Arc<InProc>),
    Raw(Arc<Raw>),
}

pub struct Built {
    pub target: AnyTarget,
    /// `http/1.1`, `h2`, `h3`, `grpc`, `raw` or `inproc`.
    pub protocol: &'static str,
    pub tls: bool,
    pub concurrency: usize,
    /// Connections the run keeps open (HTTP/1.1: one per slot; HTTP/2 and gRPC: shared by streams).
    pub connections: usize,
    /// What is called, for the report: `GET /students`, `callbench.v1.Life/Step`...
    pub call: String,
    /// What drove the sockets: `epoll`, `io_uring`, or `none` (in-process calls).
    pub io: &'static str,
    /// What the calls sent: one request, several in turn, templates.
    pub data: DataUsed,
    /// How the target's name was looked up: `per-connection`, `once` (before the run), or `none` (an address).
    pub lookup: &'static str,
}

/// An `Arc` of a target is a target: a search reuses one prepared target for every run.
struct Shared<T>(Arc<T>);

impl<T: Target> Target for Shared<T> {
    type Conn = T::Conn;
    async fn connect(&self, slot: usize) -> Result<Connected<T::Conn>, ErrorKind> {
        self.0.connect(slot).await
    }
    async fn call(&self, conn: &mut T::Conn) -> Reply {
        self.0.call(conn).await
    }
    fn reusable(&self, conn: &mut T::Conn) -> bool {
        self.0.reusable(conn)
    }
    fn varies(&self) -> bool {
        self.0.varies()
    }
    fn wire(&self) -> WireTotals {
        self.0.wire()
    }
    fn goaways(&self) -> u64 {
        self.0.goaways()
    }
    fn first_failure(&self) -> Option<String> {
        self.0.first_failure()
    }
    fn quic(&self) -> Option<QuicCounts> {
        self.0.quic()
    }
    fn connect_failures(&self) -> ConnectFailures {
        self.0.connect_failures()
    }
}

impl Built {
    /// Boxed: the engine's loop for each protocol is compiled here once, not again in each crate
    /// that awaits it (callbench_primitives::boxed).
    pub fn run<'a>(&'a self, plan: Plan, watch: &'a dyn Watch) -> Boxed<'a, Result<RunResult, LoadError>> {
        Box::pin(async move {
            let result = match &self.target {
                AnyTarget::Http1(t) => drive(Shared(t.clone()), plan, watch).await,
                AnyTarget::Http2(t) => drive(Shared(t.clone()), plan, watch).await,
                AnyTarget::Http3(t) => drive(Shared(t.clone()), plan, watch).await,
                AnyTarget::Grpc(t) => drive(Shared(t.clone()), plan, watch).await,
                AnyTarget::InProc(t) => drive(Shared(t.clone()), plan, watch).await,
                AnyTarget::Raw(t) => drive(Shared(t.clone()), plan, watch).await,
            };
            result.map_err(LoadError::Run)
        })
    }
}

async fn drive<T: Target>(target: T, plan: Plan, watch: &dyn Watch) -> Result<RunResult, String> {
    let stop = plan.load.stop;
    let shape: Duration = plan.segments.iter().map(|s| s.duration).sum();
    let length = stop.duration.or((!shape.is_zero()).then_some(shape)).map(|d| d + stop.warmup);
    watch.run_started(RunView { done: plan.load.progress.clone(), length, calls: stop.calls });
    let segments = plan.segments.clone();
    let new_sink = || RunSink::new(stop, &segments);
    let result = callbench_engine::run(target, plan.pacer_kind.pacer(), plan.load, new_sink).await;
    watch.run_ended();
    let (info, sink) = result?;
    Ok(RunResult { info, stats: sink.all, segments: sink.segments, segment_bounds: plan.segments })
}

/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn build(spec: &LoadSpec) -> Boxed<'_, Result<Built, LoadError>> {
    Box::pin(build_here(spec))
}

async fn build_here(spec: &LoadSpec) -> Result<Built, LoadError> {
    spec.validate()?;
    let url = parse::target(&spec.target)?;
    if spec.http2 && !matches!(url, TargetUrl::Http { .. }) {
        return Err(LoadError::Settings(
            "--http2 applies to http:// and https:// targets (gRPC is always HTTP/2)".into(),
        ));
    }
    if spec.http3 && !matches!(url, TargetUrl::Http { tls: true, .. }) {
        return Err(LoadError::Settings("--http3 applies to https:// targets (QUIC always carries TLS)".into()));
    }
    if spec.zero_rtt && !spec.http3 {
        return Err(LoadError::Settings("--zero-rtt applies to --http3".into()));
    }
    if spec.zero_rtt && !spec.tls_resume {
        return Err(LoadError::Settings(
            "--zero-rtt needs --tls-resume: 0-RTT sends the request under a resumed session's key".into(),
        ));
    }
    let preset = match (&url, &spec.workload) {
        (TargetUrl::InProc { .. }, Some(_)) => {
            return Err(LoadError::Settings(
                "inproc targets name their workload: inproc:<workload>, without --workload".into(),
            ))
        }
        (TargetUrl::Raw { .. }, Some(_)) => {
            return Err(LoadError::Settings("raw:// targets echo bytes: leave out --workload".into()))
        }
        (_, Some(name)) => Some(preset::preset(name, &spec.preset)?),
        _ => None,
    };
    if preset.is_some() && (spec.data.is_some() || spec.method.is_some() || spec.data_lines.is_some()) {
        return Err(LoadError::Settings("--workload fills in the request: leave out -X, -d and --data-lines".into()));
    }
    if preset.is_some() && (spec.template || spec.http_rule.is_some()) {
        return Err(LoadError::Settings(
            "--workload fills in the request: leave out --template and --http-rule".into(),
        ));
    }
    if spec.http_rule.is_some() && !matches!(url, TargetUrl::Http { .. }) {
        return Err(LoadError::Settings("--http-rule makes a REST request: give an http:// or https:// target".into()));
    }
    match url {
        TargetUrl::Http { tls, host, port, path } => build_http(spec, tls, &host, port, &path, preset).await,
        TargetUrl::Grpc { tls, host, port, method } => build_grpc(spec, tls, &host, port, method, preset).await,
        TargetUrl::InProc { workload } => build_inproc(spec, &workload),
        TargetUrl::Raw { host, port, size } => build_raw(spec, &host, port, size).await,
    }
}

/// Concurrency and connections for a protocol that holds one call per connection.
fn one_call_per_connection(spec: &LoadSpec) -> Result<(usize, usize), LoadError> {
    if spec.streams.is_some() {
        return Err(LoadError::Settings("--streams applies to HTTP/2 and gRPC targets".into()));
    }
    let c = match (spec.concurrency, spec.connections) {
        (Some(c), Some(n)) if c != n => {
            return Err(LoadError::Settings(format!(
            "HTTP/1.1 carries one call at a time per connection: -c {c} needs {c} connections, not --connections {n}"
        )))
        }
        (Some(c), _) | (None, Some(c)) => c,
        (None, None) => DEFAULT_CONCURRENCY,
    };
    let c = spec.split(c, "-c")?;
    Ok((c, c))
}

/// Concurrency and connections for HTTP/2 and gRPC: `--connections N` × `--streams M`.
fn multiplexed(spec: &LoadSpec) -> Result<(usize, usize), LoadError> {
    let connections = spec.connections.unwrap_or(1);
    let concurrency = match (spec.concurrency, spec.streams) {
        (Some(c), Some(m)) if c != connections * m => {
            return Err(LoadError::Settings(format!(
                "-c {c} disagrees with --connections {connections} × --streams {m}"
            )))
        }
        (Some(c), _) => c,
        (None, Some(m)) => connections * m,
        (None, None) => DEFAULT_CONCURRENCY.max(connections),
    };
    // A machine's share of a split run holds at least one connection of its own.
    let connections = spec.share()?.share(connections as u64).max(1) as usize;
    let concurrency = spec.split(concurrency, "-c")?;
    if spec.new_connection_per_call {
        return Ok((concurrency, concurrency));
    }
    Ok((concurrency, connections.min(concurrency)))
}

/// The route rule for every address a run's host resolves to: loopback, the far end of a link from
/// inside it, or anything with `--allow-remote` ([`callbench_link::route::allowed`]); its refusal, as
/// the engine's lookups take it.
fn route_rule(allow_remote: bool) -> impl Fn(std::net::IpAddr) -> Result<(), String> + Send + Sync + 'static {
    move |ip| callbench_link::route::allowed(ip, allow_remote).map_err(String::from)
}

/// The endpoint of a run that keeps `connections` open: refused before anything is sent when they
/// are more than the open-files limit can hold (`open_files`).
async fn endpoint(
    spec: &LoadSpec,
    connections: usize,
    tls: bool,
    host: &str,
    port: u16,
    alpn: &[&[u8]],
) -> Result<Endpoint, LoadError> {
    crate::open_files::ensure(connections)?;
    let addrs = net::resolve(host, port, route_rule(spec.allow_remote)).await.map_err(LoadError::reaching)?;
    let config = if tls {
        let options = tls::TlsOptions {
            insecure: spec.insecure,
            ca_file: spec.ca_file.clone(),
            client_cert: spec.client_cert()?,
            version: spec.tls_version,
            resume: spec.tls_resume,
        };
        Some(tls::client_config(&options, alpn).map_err(|e| LoadError::Data(e.into()))?)
    } else {
        if spec.client_cert.is_some() || spec.tls_server_name.is_some() {
            return Err(LoadError::Settings(
                "--cert, --key and --tls-server-name are TLS's: give an https:// or grpcs:// target".into(),
            ));
        }
        None
    };
    let mut endpoint = Endpoint::new(host, port, addrs, config)
        .map_err(|e| LoadError::Target(e.into()))?
        .with_connect_timeout(spec.connect_timeout());
    if !spec.resolve_once {
        let allow_remote = spec.allow_remote;
        endpoint = endpoint.with_lookup_per_connection(Arc::new(route_rule(allow_remote)));
    }
    if let Some(name) = &spec.tls_server_name {
        endpoint = endpoint.with_server_name(name).map_err(|e| LoadError::Settings(e.into()))?;
    }
    Ok(endpoint.with_io_uring(spec.io.resolve().map_err(|e| LoadError::Machine(e.into()))?))
}

async fn build_http(
    spec: &LoadSpec,
    tls: bool,
    host: &str,
    port: u16,
    path: &str,
    preset: Option<Preset>,
) -> Result<Built, LoadError> {
    if (!spec.protos.is_empty() || spec.protoset.is_some()) && spec.http_rule.is_none() {
        return Err(LoadError::Settings("--proto and --protoset apply to grpc:// targets (and to --http-rule)".into()));
    }
    let (data, used, check) = match &preset {
        Some(p) => {
            if let Some(why) = p.no_rest() {
                return Err(LoadError::Settings(format!("--workload {}: {why}; call it over grpc://", p.name)));
            }
            let check = if spec.check { Some(p.http_check(&p.contract_method())?) } else { None };
            (p.http_data(path, |r| with_flags(r, spec)), DataUsed::of_preset(p), check)
        }
        None => {
            if spec.check {
                return Err(LoadError::Settings(
                    "--check needs --workload (it knows the right answer); use --expect-body".into(),
                ));
            }
            let make = rest_request(spec, path).map_err(LoadError::Settings)?;
            let (data, used) = data::call_data(spec, data::longest_run(spec), data::most_callers(spec), make)
                .map_err(LoadError::Data)?;
            (data, used, None)
        }
    };
    let check = match (spec.expected_body()?, check) {
        (Some(expected), _) => Some(Box::new(move |body: &[u8]| body == expected.as_slice()) as BodyCheck),
        (None, check) => check,
    };
    let expect = Expect { status: spec.expect_status.clone(), body: check };
    let first = data.first().map_err(|e| LoadError::Data(e.into()))?;
    let call = format!("{} {}", first.method, first.path);
    if spec.http3 {
        return build_http3(spec, host, port, data, expect, call, used).await;
    }
    if spec.http2 {
        let (concurrency, connections) = multiplexed(spec)?;
        let endpoint = endpoint(spec, connections, tls, host, port, &[b"h2"]).await?;
        callbench_engine::h2pool::probe(&endpoint, probe_wait(spec)).await.map_err(LoadError::reaching)?;
        let (io, lookup) = (endpoint.io(), lookup_of(host, endpoint.looks_up_per_connection()));
        let target = Http2::with_data(endpoint, connections, spec.new_connection_per_call, data, expect)
            .map_err(|e| LoadError::Settings(e.into()))?;
        Ok(Built {
            target: AnyTarget::Http2(Arc::new(target)),
            protocol: "h2",
            tls,
            concurrency,
            connections,
            call,
            io,
            data: used,
            lookup,
        })
    } else {
        let (concurrency, connections) = one_call_per_connection(spec)?;
        let endpoint = endpoint(spec, connections, tls, host, port, &[b"http/1.1"]).await?;
        drop(endpoint.connect_uncounted().await.map_err(LoadError::reaching)?.0);
        let (io, lookup) = (endpoint.io(), lookup_of(host, endpoint.looks_up_per_connection()));
        let target = Http1::with_data(endpoint, data, expect, spec.new_connection_per_call)
            .map_err(|e| LoadError::Settings(e.into()))?;
        Ok(Built {
            target: AnyTarget::Http1(Arc::new(target)),
            protocol: "http/1.1",
            tls,
            concurrency,
            connections,
            call,
            io,
            data: used,
            lookup,
        })
    }
}

/// REST over HTTP/3: QUIC to the same port over UDP, its connections shared by streams as HTTP/2's.
async fn build_http3(
    spec: &LoadSpec,
    host: &str,
    port: u16,
    data: CallData<HttpRequest>,
    expect: Expect,
    call: String,
    used: DataUsed,
) -> Result<Built, LoadError> {
    if spec.io == callbench_engine::net::socket::Io::Uring {
        return Err(LoadError::Settings(
            "--io uring drives TCP sockets; HTTP/3's UDP socket is quinn's (epoll)".into(),
        ));
    }
    if spec.tls_version == Some(tls::TlsVersion::V1_2) {
        return Err(LoadError::Settings(
            "HTTP/3 runs over TLS 1.3 only (QUIC has no TLS 1.2): leave out --tls-version 1.2".into(),
        ));
    }
    let (concurrency, connections) = multiplexed(spec)?;
    crate::open_files::ensure(1)?;
    let addrs = net::resolve(host, port, route_rule(spec.allow_remote)).await.map_err(LoadError::reaching)?;
    let options = tls::TlsOptions {
        insecure: spec.insecure,
        ca_file: spec.ca_file.clone(),
        client_cert: spec.client_cert()?,
        version: Some(tls::TlsVersion::V1_3),
        resume: spec.tls_resume,
    };
    let h3 = H3Options { zero_rtt: spec.zero_rtt };
    let config = tls::client_config(&options, &[b"h3"]).map_err(|e| LoadError::Data(e.into()))?;
    let client = QuicClient::new(config, h3).map_err(|e| LoadError::Machine(e.into()))?;
    let allow_remote = spec.allow_remote;
    let new_pool = || {
        let mut pool = H3Pool::new(host, addrs.clone(), client.clone(), connections, spec.new_connection_per_call)
            .with_connect_timeout(Some(spec.connect_timeout().unwrap_or(Duration::MAX).min(Duration::from_secs(10))));
        if let Some(name) = &spec.tls_server_name {
            pool = pool.with_server_name(name);
        }
        match spec.resolve_once {
            true => pool,
            false => pool.with_lookup_per_connection(Arc::new(route_rule(allow_remote))),
        }
    };
    // One connection first, on its own endpoint: a server that does not speak HTTP/3 is one clear error.
    drop(new_pool().open_uncounted().await.map_err(LoadError::reaching)?);
    let pool = new_pool().with_connect_timeout(spec.connect_timeout());
    let lookup = lookup_of(host, pool.looks_up_per_connection());
    let authority = if port == 443 { host.to_string() } else { format!("{host}:{port}") };
    let target = Http3::with_data(pool, &authority, data, expect).map_err(|e| LoadError::Settings(e.into()))?;
    Ok(Built {
        target: AnyTarget::Http3(Arc::new(target)),
        protocol: "h3",
        tls: true,
        concurrency,
        connections,
        call,
        io: "epoll",
        data: used,
        lookup,
    })
}

async fn build_grpc(
    spec: &LoadSpec,
    tls: bool,
    host: &str,
    port: u16,
    method: Option<String>,
    preset: Option<Preset>,
) -> Result<Built, LoadError> {
    if spec.method.is_some() {
        return Err(LoadError::Settings("-X applies to HTTP targets; gRPC calls are always POST".into()));
    }
    let (concurrency, connections) = multiplexed(spec)?;
    let endpoint = endpoint(spec, connections, tls, host, port, &[b"h2"]).await?;
    let probe = callbench_engine::h2pool::probe(&endpoint, probe_wait(spec)).await.map_err(LoadError::reaching)?;
    let (descriptor, (messages, used), preset_check) = match (&preset, &method) {
        (Some(_), Some(m)) => {
            return Err(LoadError::Settings(format!("--workload names the method: leave {m} out of the target URL")))
        }
        (Some(p), None) => {
            let d = p.contract_method();
            let check = if spec.check { Some(p.grpc_check(&d)?) } else { None };
            (d.clone(), (p.grpc_data(&d)?, DataUsed::of_preset(p)), check)
        }
        (None, None) => {
            return Err(LoadError::Settings(
                "name the method: grpc://host:port/package.Service/Method (or use --workload)".into(),
            ))
        }
        (None, Some(name)) => {
            if spec.check {
                return Err(LoadError::Settings(
                    "--check needs --workload (it knows the right answer); use --expect-body".into(),
                ));
            }
            let d = resolve_method(spec, &endpoint, probe, name).await?;
            let method = d.clone();
            let make = move |text: &[u8]| {
                let json = std::str::from_utf8(text).map_err(|_| "the request JSON is not UTF-8".to_string())?;
                request_messages(&method, json)
            };
            (d, data::call_data(spec, data::longest_run(spec), concurrency, make).map_err(LoadError::Data)?, None)
        }
    };
    let check = match spec.expected_body()? {
        Some(json) => Some(expected_message_check(&descriptor, &json).map_err(LoadError::Data)?),
        None => preset_check,
    };
    if !spec.expect_status.is_empty() {
        return Err(LoadError::Settings(
            "--expect-status applies to HTTP targets (a gRPC call succeeds with status OK)".into(),
        ));
    }
    let shape = Shape::of(descriptor.is_client_streaming(), descriptor.is_server_streaming());
    let pace = spec.stream_pace.unwrap_or_default();
    let path = callbench_dynproto::grpc_path(&descriptor);
    let call = GrpcCall {
        messages,
        metadata: spec.headers.clone(),
        gzip: spec.gzip,
        check,
        shape,
        pace,
        expect_messages: preset.as_ref().filter(|_| spec.check).and_then(|p| p.grpc_answer_count()),
        ..GrpcCall::unary(path.clone(), Vec::new())
    };
    let (io, lookup) = (endpoint.io(), lookup_of(host, endpoint.looks_up_per_connection()));
    let target = Grpc::new(endpoint, connections, spec.new_connection_per_call, call)
        .map_err(|e| LoadError::Settings(e.into()))?;
    Ok(Built {
        target: AnyTarget::Grpc(Arc::new(target)),
        protocol: "grpc",
        tls,
        concurrency,
        connections,
        call: path.trim_start_matches('/').to_string(),
        io,
        data: used,
        lookup,
    })
}

/// How long the probe before a run waits for the server's HTTP/2 SETTINGS: the call timeout, at
/// most ten seconds.
fn probe_wait(spec: &LoadSpec) -> Duration {
    spec.timeout().unwrap_or(Duration::MAX).min(Duration::from_secs(10))
}

/// How `host` is looked up: `none` for an address, else `per-connection` or `once`.
fn lookup_of(host: &str, per_connection: bool) -> &'static str {
    match (host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>(), per_connection) {
        (Ok(_), _) => "none",
        (Err(_), true) => "per-connection",
        (Err(_), false) => "once",
    }
}

async fn build_raw(spec: &LoadSpec, host: &str, port: u16, size: usize) -> Result<Built, LoadError> {
    let misplaced = [
        (!spec.headers.is_empty(), "-H"),
        (spec.data.is_some(), "-d"),
        (spec.data_lines.is_some(), "--data-lines"),
        (spec.template, "--template"),
        (spec.method.is_some(), "-X"),
        (spec.gzip, "--gzip"),
        (spec.check, "--check"),
        (spec.expect_body.is_some(), "--expect-body"),
        (!spec.expect_status.is_empty(), "--expect-status"),
        (!spec.protos.is_empty() || spec.protoset.is_some(), "--proto"),
    ];
    if let Some((_, flag)) = misplaced.iter().find(|(given, _)| *given) {
        return Err(LoadError::Settings(format!("{flag} has no meaning for raw:// targets (an echo of size=N bytes)")));
    }
    let (concurrency, connections) = one_call_per_connection(spec)?;
    let endpoint = endpoint(spec, connections, false, host, port, &[]).await?;
    drop(endpoint.connect_uncounted().await.map_err(LoadError::reaching)?.0);
    let (io, lookup) = (endpoint.io(), lookup_of(host, endpoint.looks_up_per_connection()));
    Ok(Built {
        target: AnyTarget::Raw(Arc::new(Raw::new(endpoint, size))),
        protocol: "raw",
        tls: false,
        concurrency,
        connections,
        call: format!("echo {size} B"),
        io,
        data: DataUsed::one(),
        lookup,
    })
}

fn build_inproc(spec: &LoadSpec, workload: &str) -> Result<Built, LoadError> {
    let misplaced = [
        (spec.connections.is_some(), "--connections"),
        (spec.streams.is_some(), "--streams"),
        (spec.new_connection_per_call, "--new-connection-per-call"),
        (!spec.headers.is_empty(), "-H"),
        (spec.data.is_some(), "-d"),
        (spec.data_lines.is_some(), "--data-lines"),
        (spec.template, "--template"),
        (spec.method.is_some(), "-X"),
        (spec.gzip, "--gzip"),
        (spec.expect_body.is_some(), "--expect-body"),
        (!spec.expect_status.is_empty(), "--expect-status"),
    ];
    if let Some((_, flag)) = misplaced.iter().find(|(given, _)| *given) {
        return Err(LoadError::Settings(format!("{flag} has no meaning for in-process targets")));
    }
    let users = match &spec.users_file {
        Some(file) => file.clone(),
        None => preset::default_users_file()?,
    };
    let work = preset::inproc(workload, &spec.preset, &users)?;
    let target = InProc::new(work).map_err(|e| LoadError::Settings(e.into()))?;
    let concurrency = spec.split(spec.concurrency.unwrap_or(1), "-c")?;
    Ok(Built {
        target: AnyTarget::InProc(Arc::new(target)),
        protocol: "inproc",
        tls: false,
        concurrency,
        connections: 0,
        call: workload.to_string(),
        io: "none",
        data: match workload {
            "life-run" => DataUsed::in_turn(callbench_workloads::life::run_calls(spec.preset.ntimes) as usize),
            _ => DataUsed::one(),
        },
        lookup: "none",
    })
}
