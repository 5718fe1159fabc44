//! One repetition of a cell whose calls another load tool makes (wrk, ghz, locust...): the tool
//! run as its adapter says, pinned to the client CPUs, measured from outside — its CPU and memory
//! (wait4 of its process tree), the server's CPU and memory, what else used the pinned CPUs — and
//! its own report read as its claims; in a namespace of its own, its connections and bytes too.

use super::outcome::CellError;
use super::outcome::Measured;
use crate::fleet::Fleet;
use crate::options::Options;
use crate::outside::{per_call, CountedBy, Span};
use crate::plan::CellPlan;
use callbench_launcher::manifest;
use callbench_launcher::repo::Repo;
use callbench_link::LinkSpec;
use callbench_load::preset::{preset, PresetOptions};
use callbench_machine::interference::{self, Sides};
use callbench_machine::process_group::{self, RssSampler};
use callbench_peers::execute::{self, Finished};
use callbench_peers::{Call, Claims, Load, Protocol, Tool};
use callbench_results::model::{PeerRun, Results, RunMetrics};
use hdrhistogram::Histogram;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Time a tool gets past its duration to start, finish its calls in flight and write its report
/// before it is stopped (locust needs seconds to start; wrk, ab and hey wait for their last calls).
pub fn grace(duration: Duration) -> Duration {
    Duration::from_secs(15) + duration / 2
}

/// The folders where tools callbench installs itself live, besides PATH, Go's and Cargo's bins:
/// locust's virtualenv, and the workspace's binaries (seed 000's tonic client).
pub fn tool_dirs(repo: &Repo) -> Vec<PathBuf> {
    vec![repo.target_dir().join("peers/locust/venv/bin"), repo.target_dir().join("release")]
}

/// The longest a client that counts its calls may take, when the cell gives no duration.
const COUNTED_CALLS_BOUND: Duration = Duration::from_secs(600);

/// What `tool` could only approximate of the cell's load (at its resolved `rate`), or why it cannot
/// make the cell's calls: not installable here, not installed, or the cell asks what it cannot express.
pub(crate) fn check(
    repo: &Repo,
    tool: &dyn Tool,
    p: &CellPlan,
    protocol: manifest::Protocol,
    rate: Option<f64>,
    o: &Options,
) -> Result<Vec<String>, String> {
    if let Some(why) = callbench_peers::unavailable(tool) {
        return Err(why.into());
    }
    if execute::locate(tool.program(), &tool_dirs(repo)).is_none() {
        return Err(format!("{} is not installed ({}); scripts/setup installs it", tool.name(), tool.install()));
    }
    tool.prepared(&repo.root)?;
    let mut probe = load(p, SocketAddr::from(([127, 0, 0, 1], 1)), protocol, rate, o, Path::new("/"), &repo.root)?;
    probe.ca_cert = probe.tls.then(|| PathBuf::from("/server.pem"));
    callbench_peers::invocation(tool, &probe).map(|i| i.approximations).map_err(|why| format!("not applicable: {why}"))
}

/// What the cell asks of any tool, against `addr`.
pub(crate) fn load(
    p: &CellPlan,
    addr: SocketAddr,
    protocol: manifest::Protocol,
    rate: Option<f64>,
    o: &Options,
    dir: &Path,
    repo: &Path,
) -> Result<Load, String> {
    if p.server.http3 {
        return Err("the peer tools are driven over HTTP/1.1 and HTTP/2 here; +h3 cells are callbench's own".into());
    }
    let f = &p.fields;
    let d = PresetOptions::default();
    let options = PresetOptions {
        payload_size: f.payload_size.unwrap_or(d.payload_size),
        ntimes: f.ntimes.unwrap_or(d.ntimes),
        user_id: f.user_id.unwrap_or(d.user_id),
        records: d.records,
    };
    let w = preset(&p.workload, &options)?;
    if w.stream.is_some() {
        return Err(format!("workload {}: the peer tools are driven with one request, not a stream", w.name));
    }
    let call = Call {
        method: w.method.into(),
        path: w.path.clone(),
        body: w.body.as_ref().map(|b| serde_json::to_vec(b).expect("JSON")),
        grpc_method: w.grpc_method.into(),
        grpc_message: w.grpc_message(&w.contract_method())?,
        descriptor_set: callbench_contract::FILE_DESCRIPTOR_SET.to_vec(),
    };
    let duration = f.duration.as_deref().map(callbench_load::parse::duration).transpose()?;
    let warmup = f.warmup.as_deref().map(callbench_load::parse::duration).transpose()?.unwrap_or_default();
    Ok(Load {
        protocol: match (protocol, p.server.http2) {
            (manifest::Protocol::Grpc, _) => Protocol::Grpc,
            (_, true) => Protocol::Http2,
            _ => Protocol::Http1,
        },
        tls: p.server.tls,
        authority: addr.to_string(),
        call,
        concurrency: f.concurrency.unwrap_or(1),
        connections: f.connections,
        duration: match (duration, f.calls) {
            (Some(d), _) => d,
            (None, Some(_)) => COUNTED_CALLS_BOUND,
            (None, None) => return Err("peer tools run for a duration or a count of calls".into()),
        },
        calls: f.calls,
        warmup,
        rate,
        gzip: f.gzip.unwrap_or(false),
        new_connection_per_call: f.new_connection_per_call.unwrap_or(false),
        threads: o.client_cpus.len().max(1),
        dir: dir.to_path_buf(),
        repo: repo.to_path_buf(),
        ca_cert: None,
    })
}

/// One repetition of `p` by `tool`; `dir` is where its files and output go.
pub async fn measure(
    p: &CellPlan,
    tool: &'static dyn Tool,
    rate: Option<f64>,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
    dir: PathBuf,
) -> Result<Measured, CellError> {
    if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), p.server.tls, &mut results.servers) {
        return Err(CellError::ServerDied(crash));
    }
    let running = fleet.ensure(&p.server.name, &p.mode(), p.server.tls, &mut results.servers).await?;
    let (addr, group, protocol) = (running.addr(), running.group(), running.protocol);
    let answered_before = running.answered();
    let mut load = load(p, addr, protocol, rate, o, &dir, &fleet.repo().root)?;
    if load.tls && tool.checks_certificates() {
        load.ca_cert = Some(server_certificate(fleet, addr, &dir)?);
    }
    let invocation = callbench_peers::invocation(tool, &load).map_err(String::from)?;
    let program = execute::locate(tool.program(), &tool_dirs(fleet.repo())).ok_or(format!(
        "{} is not installed ({})",
        tool.name(),
        tool.install()
    ))?;
    let pids = process_group::group_pids(group);
    let sides = Sides { client: &o.client_cpus, server: &o.server_cpus };
    // Across a link (or a veth pair) the tool runs in its client namespace, which counts for it.
    let (netns, counters) = match fleet.link() {
        Some(link) => (Some(link.client.fd()), Some(link.client_counters())),
        None => (None, None),
    };
    // An emulated link takes the cell's spec for the run, as for the engine's cells.
    let emulated = fleet.link().filter(|l| l.is_emulated());
    let link_before = emulated
        .map(|l| crate::network::before_run(l, &p.fields.network.clone().unwrap_or_else(LinkSpec::transparent)));
    let net_before = counters.as_ref().and_then(|c| c.read().ok());
    let before = interference::snapshot(&pids);
    let rss = RssSampler::start(pids.clone());
    let (cpus, cancel, limit) =
        (o.client_cpus.clone(), o.cancel.clone(), load.duration + load.warmup + grace(load.duration));
    let command = invocation.command_line();
    let finished = tokio::task::spawn_blocking(move || {
        execute::run(&invocation, &program, &load.dir, &cpus, netns, limit, &cancel)
    })
    .await
    .map_err(|e| format!("the tool's runner failed: {e}"))?
    .map_err(String::from)?;
    let after = interference::snapshot(&pids);
    let net_after = counters.as_ref().and_then(|c| c.read().ok());
    let link_use = emulated.zip(link_before).map(|(l, before)| crate::network::use_since(l, &before));
    let server_rss = rss.peak();
    drop(rss);
    let answered_after = fleet
        .ensure(&p.server.name, &p.mode(), p.server.tls, &mut results.servers)
        .await
        .ok()
        .and_then(|r| r.answered());
    if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), p.server.tls, &mut results.servers) {
        return Err(CellError::ServerDied(crash));
    }
    let empty = Histogram::new(3).expect("a histogram");
    if finished.cancelled {
        let metrics = RunMetrics::default();
        return Ok(Measured { metrics, histogram: empty, window: finished.wall, cancelled: true });
    }
    let claims = read_claims(tool, &finished, limit)?;
    let mut metrics = metrics(tool, &claims, &finished, command);
    metrics.link = link_use;
    if let (Some(peer), Some(a), Some(b)) = (metrics.peer.as_mut(), answered_before, answered_after) {
        peer.server_answered = Some(b.saturating_sub(a));
    }
    // Per call the server answered while the tool ran, the same span as the counts; else per
    // call the tool says it made.
    let answered = metrics.peer.as_ref().and_then(|p| p.server_answered);
    if let (Some(a), Some(b)) = (net_before, net_after) {
        let run = b.since(&a);
        metrics.outside = match answered {
            Some(n) => per_call(&run, run.tcp_active_opens, n, CountedBy::Server, Span::Run),
            None => per_call(&run, run.tcp_active_opens, claims.ok + claims.errors, CountedBy::Client, Span::Run),
        };
    }
    let calls = (claims.ok + claims.errors).max(1) as f64;
    // The window the tool was calling in: what it reports, unless that is longer than it ran.
    let window = if claims.seconds > 0.0 && claims.seconds <= finished.wall.as_secs_f64() {
        claims.seconds
    } else {
        finished.wall.as_secs_f64()
    };
    let tool_cpu = (finished.user + finished.system).as_secs_f64();
    metrics.client_cpu_us_per_call = tool_cpu * 1e6 / calls;
    metrics.client_cpu_cores = tool_cpu / window;
    let server_cpu = process_group::cpu_between(&before.server_cpu(), &after.server_cpu()).as_secs_f64();
    metrics.server_cpu_us_per_call = Some(server_cpu * 1e6 / calls);
    metrics.server_cpu_cores = Some(server_cpu / window);
    metrics.server_rss_peak_kib = Some(server_rss);
    metrics.interference = interference::between(&before, &after, &sides, claims.ok + claims.errors);
    metrics.disturbed = metrics.interference.as_ref().and_then(interference::disturbed);
    remove_large_files(&dir);
    Ok(Measured { metrics, histogram: empty, window: Duration::from_secs_f64(window), cancelled: false })
}

/// The server's certificate, read by a handshake from the client's side of the link, as a PEM file
/// in `dir` for a client that checks it.
fn server_certificate(fleet: &Fleet<'_>, addr: SocketAddr, dir: &Path) -> Result<PathBuf, String> {
    let read = || callbench_verify::dial::server_certificate_pem(addr, Duration::from_secs(10)).map_err(String::from);
    let pem = match fleet.link() {
        Some(link) => link.client.run(read),
        None => read(),
    }
    .map_err(|e| format!("cannot read the server's certificate: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join("server.pem");
    std::fs::write(&path, pem).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The tool's claims, or why there are none: it was stopped past its time, or its output cannot be read.
fn read_claims(tool: &dyn Tool, f: &Finished, limit: Duration) -> Result<Claims, String> {
    if f.timed_out {
        return Err(format!(
            "{} was still running {} s after it started (its duration + grace): stopped",
            tool.name(),
            limit.as_secs()
        ));
    }
    tool.parse(&f.output).map_err(|e| {
        let stderr: String = f.output.stderr.trim().chars().take(300).collect();
        format!(
            "{} ended with {}; its report could not be read: {e}{}",
            tool.name(),
            f.exit,
            if stderr.is_empty() { String::new() } else { format!(" (stderr: {stderr})") }
        )
    })
}

/// The run's record: the tool's claims as the run's figures, and what was measured around it.
fn metrics(tool: &dyn Tool, c: &Claims, f: &Finished, command: String) -> RunMetrics {
    RunMetrics {
        calls_ok: c.ok,
        calls_errors: c.errors,
        errors: c.error_kinds.clone(),
        duration_s: c.seconds,
        throughput_per_s: c.throughput,
        peer: Some(PeerRun {
            tool: tool.name().into(),
            command,
            exit: f.exit.to_string(),
            latency_us: c.latency.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            server_answered: None,
            wall_s: f.wall.as_secs_f64(),
            rss_peak_kib: f.max_rss_kib,
        }),
        ..RunMetrics::default()
    }
}

/// Tools' logs and raw results can be many megabytes (h2load's per-call log, vegeta's results):
/// they are read; the small files (command output, reports) stay beside results.json.
fn remove_large_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.metadata().is_ok_and(|m| m.len() > 1 << 20) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
