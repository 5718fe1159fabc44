//! Suite files (`suites/*.toml`): experiments, each a set of cells — servers × workloads × the
//! values of one swept parameter — measured with the same load settings. Unknown keys are errors.

use crate::RunError;
use callbench_link::LinkSpec;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The suite's name, in its results and reports.
    pub name: String,
    /// What it runs, in a sentence (the suite catalogue quotes it).
    #[serde(default)]
    pub description: String,
    /// Repetitions of every cell (K); an experiment may override it.
    #[serde(default = "default_repetitions")]
    pub repetitions: usize,
    /// Every timing interval is at least ± this share of its median (see
    /// `SuiteRecord::interval_floor`). Unset: the spread the steadiness probe measures before the
    /// suite on the pinned CPUs.
    #[serde(default)]
    pub interval_floor: Option<f64>,
    /// CPUs for the client (default: the first half of the machine's; never shared with the
    /// servers' when the machine has two or more).
    #[serde(default)]
    pub client_cpus: Option<Vec<usize>>,
    /// CPUs for every server (default: the machine's other half).
    #[serde(default)]
    pub server_cpus: Option<Vec<usize>>,
    /// Load settings every experiment starts from.
    #[serde(default)]
    pub defaults: LoadFields,
    /// The experiments, in the order they run (`[[experiment]]` tables).
    #[serde(rename = "experiment")]
    pub experiments: Vec<ExperimentSpec>,
    /// A user's servers (`[[server]]`): started by a command, or running at a URL (suite/user.rs).
    #[serde(default, rename = "server")]
    pub user_servers: Vec<user::UserServer>,
    /// A user's calls (`[[call]]`), named in experiments' `workloads`.
    #[serde(default, rename = "call")]
    pub calls: Vec<user::CallSpec>,
    /// The suite file's folder: its servers start there, its calls' files are found from there.
    #[serde(skip)]
    pub folder: std::path::PathBuf,
    /// A user's endpoints, named as servers by their labels (`callbench run URL…`, or a suite's
    /// servers at a URL, one per server and call).
    #[serde(skip)]
    pub endpoints: Vec<std::sync::Arc<crate::endpoint::Endpoint>>,
}

fn default_repetitions() -> usize {
    5
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Letters, digits, `-` or `_`, unique in the suite: the first part of its cells' ids.
    pub id: String,
    /// The question it answers, heading its table and its part of the reports.
    pub title: String,
    /// How it answers it, in the reports.
    #[serde(default)]
    pub description: String,
    /// The seed articles it reproduces (`["000"]`).
    #[serde(default)]
    pub seeds: Vec<String>,
    /// What its cells measure (default: calls to servers through the load engine).
    #[serde(default)]
    pub kind: ExperimentKind,
    /// Load run against each server once after it starts, before its first cell, and not
    /// measured: JIT compilers (Java, Node) reach steady state before any repetition counts.
    #[serde(default)]
    pub server_warmup: Option<String>,
    /// The metric that answers the question (default: throughput, or p50 latency at concurrency 1).
    #[serde(default)]
    pub headline: Option<String>,
    /// Servers that pause now and then (`"100ms every 1s"`): the Rust servers sleep the thread
    /// answering the first call after each period, as a garbage collector's pause would.
    #[serde(default)]
    pub server_stall: Option<String>,
    /// `rust-actix`, `rust-actix+h2` (REST over h2c), `rust-tonic`, `...+tls`, `rust-axum+h3` (REST over HTTP/3), `inproc`.
    pub servers: Vec<String>,
    /// The load tools that make the calls: `callbench` (its engine, the default), peers
    /// people use (`wrk`, `ab`, `h2load`, `hey`, `fortio`, `ghz`, `vegeta`, `oha`, `locust`,
    /// `locust-fast`, `locust-grpc`), or a seed article's own client (`seed000-rest`,
    /// `seed000-tonic`, `seed003-java`); every tool gets the same cells.
    #[serde(default)]
    pub clients: Vec<String>,
    /// The calls made: `auth`, `students`, `cars`, `life`, `life-run` (step on the boards of one
    /// run from the acorn, in turn), `life-setup`, `echo`, `noop` (or a processing experiment's
    /// programs' work).
    pub workloads: Vec<String>,
    #[serde(flatten)]
    pub load: LoadFields,
    /// One load key and its values, each value making its own cells.
    #[serde(default)]
    pub sweep: Option<Sweep>,
    /// Seed articles' figures set beside its cells in the reports.
    #[serde(default, rename = "reference")]
    pub references: Vec<ReferenceSpec>,
    /// Split each load cell across the nodes of a Ray cluster (`python -m callbench.distributed`).
    #[serde(default)]
    pub cluster: Option<ClusterSpec>,
    /// The words that open this experiment's line of the answer printed first at the end of the
    /// run (`One call at a time`): set on the experiments that answer the suite's question.
    #[serde(default)]
    pub answer: Option<String>,
    /// When the experiment cannot run on this machine (an emulated network without root), the
    /// run goes on without it and its report says why and how to include it.
    #[serde(default)]
    pub optional: bool,
    /// Runs the client on the servers' CPUs and the servers on the client's (`client_cpus` and
    /// `server_cpus` swapped): beside an experiment with the usual placement, it tells a core's
    /// speed from a side's work.
    #[serde(default)]
    pub swap_cpus: bool,
    /// Conditions every cell of the experiment must meet, for CI (`["p99<200ms", "errors<0.1%"]`):
    /// judged on the cells' medians, a crossed one makes `callbench run` exit 99.
    #[serde(default)]
    pub thresholds: Vec<String>,
}

/// `cluster = { ray = "HOST:PORT", workers = N }`: where the Ray cluster's head is, and how many
/// of its nodes make each cell's calls together.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// The Ray cluster's head, `HOST:PORT`.
    pub ray: String,
    /// How many of its nodes make each cell's calls together.
    pub workers: usize,
    /// The address the experiment's servers listen on, one the workers reach (default: this
    /// machine's loopback, for Ray nodes of this machine). Other than loopback: `--allow-remote`.
    #[serde(default)]
    pub server_host: Option<String>,
    /// How far apart the workers may start (`python -m callbench.distributed --skew-limit-ms`;
    /// default 5 ms): a cluster whose nodes share a busy machine, or whose clocks are estimated over
    /// a slow network, needs more.
    #[serde(default)]
    pub skew_limit: Option<String>,
}

impl ClusterSpec {
    /// `skew_limit` in milliseconds, when set (checked by `Suite::check`).
    pub fn skew_limit_ms(&self) -> Option<f64> {
        let limit = callbench_load::parse::duration(self.skew_limit.as_deref()?).ok()?;
        Some(limit.as_secs_f64() * 1e3)
    }

    /// `server_host` when other machines would reach it.
    pub fn remote_server_host(&self) -> Option<&str> {
        let host = self.server_host.as_deref()?;
        let ip: std::net::IpAddr = host.parse().ok()?;
        (!ip.is_loopback()).then_some(host)
    }
}

impl std::fmt::Display for ClusterSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} workers of the Ray cluster at {}", self.workers, self.ray)?;
        match &self.server_host {
            Some(host) => write!(f, ", servers at {host}"),
            None => Ok(()),
        }
    }
}

/// What an experiment's cells measure, and so what its `servers` name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String")]
pub enum ExperimentKind {
    /// Calls to servers through the load engine (`servers`: reference servers, `inproc`).
    #[default]
    Load,
    /// Seed 000's work as a program per language (`servers`: folders of `processing/`).
    Processing,
    /// Seed 004: Python callers (`servers`: `pyo3`, `python`, `requests+rust-axum`...).
    Python,
}

impl TryFrom<String> for ExperimentKind {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        match text.as_str() {
            "load" => Ok(ExperimentKind::Load),
            "processing" => Ok(ExperimentKind::Processing),
            "python" => Ok(ExperimentKind::Python),
            other => Err(format!("unknown kind '{other}' (load, processing, python)")),
        }
    }
}

/// One parameter and its values; each value makes its own cells.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// A load key (`concurrency`, `rate`, `calls`, `payload_size` …) or one of the network's (`rtt`, `loss` …).
    pub param: String,
    /// Its values, one set of cells each (the cell ids end in `/param=value`).
    #[schemars(with = "Vec<toml_values::Scalar>")]
    pub values: Vec<toml::Value>,
}

/// A seed article's figure and where this suite measures the same thing.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// The article (`"002"`).
    pub seed: String,
    /// What it measured, in words.
    pub what: String,
    /// Its figure, as it gave it (`"~64k rps"`).
    pub article: String,
    /// Cell id relative to the experiment: `students/rust-tonic` or `students/rust-tonic/connections=1`.
    #[serde(default)]
    pub cell: Option<String>,
    /// The cell's metric set beside the figure (default: the experiment's headline).
    #[serde(default)]
    pub metric: Option<String>,
    /// What differs between the article's conditions and these, in words.
    #[serde(default)]
    pub note: String,
}

/// The load and server settings of a cell; unset fields fall back to the suite's defaults, then to
/// built-in values.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadFields {
    /// Repetitions of every cell, instead of the suite's.
    pub repetitions: Option<usize>,
    /// Calls in flight (closed loop), or at most in flight (open loop); default 1.
    pub concurrency: Option<usize>,
    /// Calls per repetition (instead of a duration).
    pub calls: Option<u64>,
    /// How long each repetition is measured (`"5s"`).
    pub duration: Option<String>,
    /// How long each repetition runs before it is measured (`"1s"`); a timed cell's run in its
    /// experiment's warm-up round is measured this long too.
    pub warmup: Option<String>,
    /// Calls/s, or `"50% of <experiment>"`: that share of the slowest server's median throughput
    /// measured in an earlier experiment of the suite, for the same workload.
    #[schemars(with = "Option<toml_values::NumberOrText>")]
    pub rate: Option<toml::Value>,
    /// Open loop: Poisson arrivals around the rate instead of evenly spaced calls.
    pub poisson: Option<bool>,
    /// Connections the client keeps (HTTP/1.1: one per call in flight; HTTP/2 and gRPC: 1).
    pub connections: Option<usize>,
    /// HTTP/2 and gRPC: calls in flight on each connection at most.
    pub streams: Option<usize>,
    /// A new connection (and TLS handshake) for every call, as a client without keep-alive makes.
    pub new_connection_per_call: Option<bool>,
    /// TLS cells: the only version the client offers, "1.2" or "1.3" (default: both; 1.3 wins).
    pub tls_version: Option<String>,
    /// What drives the client's sockets: "epoll" (the default), "uring" or "auto" (`--io`).
    pub io: Option<String>,
    /// Compress requests with gzip and accept gzip answers (`callbench load --gzip`).
    pub gzip: Option<bool>,
    /// `echo`: about this many bytes of JSON per message.
    pub payload_size: Option<usize>,
    /// `life`: generations computed per call.
    pub ntimes: Option<u32>,
    /// `auth`: the user id authenticated.
    pub user_id: Option<i64>,
    /// `records-*`: records per call (the messages of a stream, the lines of an upload or download).
    pub records: Option<u32>,
    /// Server mode: `preloaded` or `per-request` (auth reads users.json on every call).
    pub mode: Option<String>,
    /// How long a call may take before it counts as an error (`"10s"`).
    pub timeout: Option<String>,
    /// Processing experiments: timed iterations per process (warm).
    pub iterations: Option<u64>,
    /// Processing experiments: untimed iterations before the timed ones; Python experiments:
    /// untimed calls before the timed ones of each repetition (default 20).
    pub warmup_iterations: Option<u64>,
    /// Processing experiments: `warm`, or `cold` (one iteration in a fresh process).
    pub start: Option<String>,
    /// Processing experiments: the password hashed.
    pub password: Option<String>,
    /// An emulated link between client and server: `{ rtt = "40ms", bandwidth = "20mbit" }` or
    /// `"rtt=40ms,bandwidth=20mbit"`; a sweep over one of its keys (`rtt`, `loss`...) changes it.
    #[schemars(with = "Option<toml_values::TableOrText>")]
    pub network: Option<LinkSpec>,
}

impl LoadFields {
    /// `self` where set, else `base`.
    pub fn over(&self, base: &LoadFields) -> LoadFields {
        macro_rules! pick {
            ($($f:ident),*) => { LoadFields { $($f: self.$f.clone().or_else(|| base.$f.clone())),* } };
        }
        pick!(
            repetitions,
            concurrency,
            calls,
            duration,
            warmup,
            rate,
            poisson,
            connections,
            streams,
            new_connection_per_call,
            tls_version,
            io,
            gzip,
            payload_size,
            ntimes,
            user_id,
            records,
            mode,
            timeout,
            iterations,
            warmup_iterations,
            start,
            password,
            network
        )
    }

    /// Sets the swept parameter to `value`.
    pub(crate) fn set(&mut self, param: &str, value: &toml::Value) -> Result<(), String> {
        if LinkSpec::is_key(param) {
            let text = match value {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let base = self.network.clone().unwrap_or_else(LinkSpec::transparent);
            self.network = Some(base.with(param, &text).map_err(|e| format!("sweep {param}: {e}"))?);
            return Ok(());
        }
        let int = || value.as_integer().filter(|v| *v >= 0).ok_or(format!("sweep {param}: {value} is not a count"));
        let boolean = || value.as_bool().ok_or(format!("sweep {param}: {value} is not true/false"));
        let text = || value.as_str().map(str::to_string).ok_or(format!("sweep {param}: {value} is not a string"));
        let a_duration = || {
            let t = text()?;
            callbench_load::parse::duration(&t).map_err(|e| format!("sweep {param}: {e}"))?;
            Ok::<_, String>(t)
        };
        match param {
            "concurrency" => self.concurrency = Some(int()? as usize),
            "calls" => self.calls = Some(int()? as u64),
            "connections" => self.connections = Some(int()? as usize),
            "streams" => self.streams = Some(int()? as usize),
            "payload_size" => self.payload_size = Some(int()? as usize),
            "ntimes" => self.ntimes = Some(int()? as u32),
            "user_id" => self.user_id = Some(int()?),
            "records" => self.records = Some(int()? as u32),
            "rate" => self.rate = Some(value.clone()),
            "gzip" => self.gzip = Some(boolean()?),
            "poisson" => self.poisson = Some(boolean()?),
            "new_connection_per_call" => self.new_connection_per_call = Some(boolean()?),
            "tls_version" => {
                // 1.2 unquoted is a TOML float.
                let v = value.as_float().map(|f| format!("{f:.1}")).map_or_else(text, Ok)?;
                check_tls_version(&v).map_err(|e| format!("sweep {param}: {e}"))?;
                self.tls_version = Some(v);
            }
            "io" => {
                let v = text()?;
                check_io(&v).map_err(|e| format!("sweep {param}: {e}"))?;
                self.io = Some(v);
            }
            "mode" => self.mode = Some(text()?),
            "duration" => self.duration = Some(a_duration()?),
            "warmup" => self.warmup = Some(a_duration()?),
            "iterations" => self.iterations = Some(int()? as u64),
            "start" => self.start = Some(text()?),
            other => return Err(format!("cannot sweep '{other}'")),
        }
        Ok(())
    }
}

/// The suite run when `callbench run` gets no file.
pub const DEFAULT_SUITE: &str = include_str!("../../../suites/default.toml");

impl Suite {
    /// Parses and checks a suite; the error is one line.
    pub fn parse(text: &str) -> Result<Suite, RunError> {
        Suite::parse_text(text).map_err(RunError::Settings)
    }

    fn parse_text(text: &str) -> Result<Suite, String> {
        let suite: Suite = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
        suite.check()?;
        Ok(suite)
    }

    fn check(&self) -> Result<(), String> {
        if self.experiments.is_empty() {
            return Err("the suite has no [[experiment]]".into());
        }
        if let Some(floor) = self.interval_floor.filter(|f| !(0.0..1.0).contains(f)) {
            return Err(format!("interval_floor {floor} must be a share between 0 and 1 (0.02 = ±2%)"));
        }
        if self.repetitions == 0 {
            return Err("repetitions must be at least 1".into());
        }
        self.check_user()?;
        let mut seen = BTreeMap::new();
        for (i, e) in self.experiments.iter().enumerate() {
            if e.id.is_empty() || !e.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(format!("experiment id '{}' must be letters, digits, '-' or '_'", e.id));
            }
            if seen.insert(e.id.clone(), i).is_some() {
                return Err(format!("two experiments are called '{}'", e.id));
            }
            for text in &e.thresholds {
                crate::thresholds::parse(text).map_err(|why| format!("experiment '{}': {why}", e.id))?;
            }
            if e.servers.is_empty() || e.workloads.is_empty() {
                return Err(format!("experiment '{}' needs servers and workloads", e.id));
            }
            match e.kind {
                ExperimentKind::Load => {}
                ExperimentKind::Processing => {
                    if e.workloads != ["auth"] {
                        return Err(format!(
                            "experiment '{}': processing experiments time the auth workload only",
                            e.id
                        ));
                    }
                }
                ExperimentKind::Python => {
                    if let Some(w) = e.workloads.iter().find(|w| !crate::mechanism::WORKLOADS.contains(&w.as_str())) {
                        return Err(format!(
                            "experiment '{}': Python experiments call {}, not '{w}'",
                            e.id,
                            crate::mechanism::WORKLOADS.join(", ")
                        ));
                    }
                    for s in &e.servers {
                        crate::mechanism::Mechanism::parse(s).map_err(|m| format!("experiment '{}': {m}", e.id))?;
                    }
                }
            }
            check_clients(self, e).map_err(|m| format!("experiment '{}': {m}", e.id))?;
            check_cluster(self, e)?;
            if let Some(stall) = &e.server_stall {
                callbench_serverkit::stall::parse(stall)
                    .map_err(|m| format!("experiment '{}': server_stall '{stall}': {m}", e.id))?;
            }
            if let Some(w) = &e.server_warmup {
                callbench_load::parse::duration(w).map_err(|m| format!("experiment '{}': server_warmup: {m}", e.id))?;
            }
            let start = e.load.start.as_deref().or(self.defaults.start.as_deref());
            let starts =
                e.sweep.iter().filter(|s| s.param == "start").flat_map(|s| s.values.iter().filter_map(|v| v.as_str()));
            for s in start.into_iter().chain(starts) {
                if s != "warm" && s != "cold" {
                    return Err(format!("experiment '{}': start '{s}' must be warm or cold", e.id));
                }
            }
            let load = e.load.over(&self.defaults);
            for (key, value) in [("duration", &load.duration), ("warmup", &load.warmup), ("timeout", &load.timeout)] {
                if let Some(v) = value {
                    callbench_load::parse::duration(v).map_err(|m| format!("experiment '{}': {key}: {m}", e.id))?;
                }
            }
            if let Some(v) = e.load.tls_version.as_deref().or(self.defaults.tls_version.as_deref()) {
                check_tls_version(v).map_err(|m| format!("experiment '{}': tls_version: {m}", e.id))?;
            }
            if let Some(v) = e.load.io.as_deref().or(self.defaults.io.as_deref()) {
                check_io(v).map_err(|m| format!("experiment '{}': io: {m}", e.id))?;
            }
            if let Some(sweep) = &e.sweep {
                if sweep.values.is_empty() {
                    return Err(format!("experiment '{}': the sweep has no values", e.id));
                }
                let mut probe = LoadFields::default();
                for v in &sweep.values {
                    probe.set(&sweep.param, v).map_err(|m| format!("experiment '{}': {m}", e.id))?;
                }
            }
            if let Some(h) = &e.headline {
                if !callbench_results::model::METRICS.iter().any(|(name, _, _)| name == h) {
                    return Err(format!("experiment '{}': unknown headline metric '{h}'", e.id));
                }
            }
        }
        Ok(())
    }
}

/// A cluster splits calls through the load engine to servers: nothing else can be split.
fn check_cluster(suite: &Suite, e: &ExperimentSpec) -> Result<(), String> {
    let Some(cluster) = &e.cluster else { return Ok(()) };
    let fields = e.load.over(&suite.defaults);
    let what = format!("experiment {}: cluster", e.id);
    if let Some(host) = &cluster.server_host {
        host.parse::<std::net::IpAddr>()
            .map_err(|_| format!("{what}: server_host must be an IP address of this machine, not {host:?}"))?;
    }
    if let Some(limit) = &cluster.skew_limit {
        callbench_load::parse::duration(limit).map_err(|m| format!("{what}: skew_limit: {m}"))?;
    }
    if cluster.workers == 0 {
        return Err(format!("{what}: workers must be at least 1"));
    }
    if cluster.ray.rsplit_once(':').and_then(|(_, port)| port.parse::<u16>().ok()).is_none() {
        return Err(format!("{what}: ray must be the cluster's HOST:PORT, not {:?}", cluster.ray));
    }
    if e.kind != ExperimentKind::Load {
        return Err(format!("{what}: only load experiments can be split across machines"));
    }
    if e.servers.iter().any(|s| s.split('+').next() == Some("inproc")) {
        return Err(format!("{what}: in-process cells run inside one process and cannot be split (drop inproc)"));
    }
    if e.clients.iter().any(|c| c != "callbench") {
        return Err(format!("{what}: only callbench's engine runs on a cluster (clients = [\"callbench\"])"));
    }
    let callers = fields.concurrency.or((fields.connections.is_none() && fields.streams.is_none()).then_some(1));
    if let Some(c) = callers.filter(|c| *c < cluster.workers) {
        return Err(format!(
            "{what}: concurrency {c} cannot be split across {} workers: each needs a caller (concurrency >= workers)",
            cluster.workers
        ));
    }
    if fields.network.is_some() || e.sweep.as_ref().is_some_and(|s| LinkSpec::is_key(&s.param)) {
        return Err(format!("{what}: an emulated network is on this machine; a cluster's workers are elsewhere"));
    }
    Ok(())
}

/// Peer tools make calls to servers over the wire, for a time: only in load experiments, against
/// servers (not in-process), with a duration.
fn check_clients(suite: &Suite, e: &ExperimentSpec) -> Result<(), String> {
    let peers: Vec<&String> = e.clients.iter().filter(|c| c.as_str() != "callbench").collect();
    if let Some((i, c)) = e.clients.iter().enumerate().find(|(i, c)| e.clients[..*i].contains(c)) {
        return Err(format!("client '{c}' is named twice (at {i})"));
    }
    for c in &peers {
        callbench_peers::by_name(c)?;
    }
    if peers.is_empty() {
        return Ok(());
    }
    if e.kind != ExperimentKind::Load {
        return Err("clients are for load experiments (calls to servers)".into());
    }
    if e.servers.iter().any(|s| s == "inproc") {
        return Err("a client tool cannot make in-process calls: leave inproc out".into());
    }
    let load = e.load.over(&suite.defaults);
    let counted = load.calls.is_some() || e.sweep.as_ref().is_some_and(|s| s.param == "calls");
    let tools: Vec<_> = peers.iter().map(|c| callbench_peers::by_name(c).expect("checked above")).collect();
    match tools.iter().find(|t| counted && !t.counts_calls()) {
        Some(t) => Err(format!("{} runs for a duration: set duration (not calls)", t.name())),
        None if !counted && load.duration.is_none() => Err(format!("{} runs for a duration: set duration", peers[0])),
        None => Ok(()),
    }
}

fn check_tls_version(v: &str) -> Result<(), String> {
    v.parse::<callbench_load::TlsVersion>().map(|_| ()).map_err(String::from)
}

fn check_io(v: &str) -> Result<(), String> {
    v.parse::<callbench_load::Io>().map(|_| ()).map_err(String::from)
}

/// toml's messages span lines (with a caret under the error); keep the facts on one line.
fn one_line(message: &str) -> String {
    message.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('|')).collect::<Vec<_>>().join(" ")
}

pub mod catalogue;
mod endpoints;
pub mod reference;
#[cfg(test)]
mod tests;
mod times;
mod toml_values;
pub mod user;
mod user_suite;
