//! From an experiment to its cells: servers × workloads × swept values, each with its load
//! settings resolved, its id, and the `callbench load` spec that measures it.

use crate::endpoint::Endpoint;
use crate::mechanism::{default_calls, Mechanism};
use crate::suite::user::CallSpec;
use crate::suite::ClusterSpec;
use crate::suite::{ExperimentKind, ExperimentSpec, LoadFields, Suite};
use crate::RunError;
use callbench_load::{parse, preset::PresetOptions, LoadSpec};
// The protocol a cell's server speaks, as `load_spec` takes it (re-exported for the fuzz targets).
pub use callbench_launcher::manifest::Protocol;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Bytes each way of a raw cell whose suite sets no `payload_size`: the size `callbench load raw://`
/// takes by default.
pub const RAW_DEFAULT_SIZE: usize = 64;

/// `rust-actix`, `rust-actix+h2`, `rust-axum+h3`, `inproc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    /// REST over HTTP/2 with prior knowledge (h2c) instead of HTTP/1.1 (over TLS: h2 by ALPN).
    pub http2: bool,
    /// Over TLS (the server started with its manifest's `[tls]` arguments).
    pub tls: bool,
    /// REST over HTTP/3 (QUIC on UDP at the server's port); always TLS.
    pub http3: bool,
}

impl ServerSpec {
    pub fn parse(text: &str) -> Result<ServerSpec, RunError> {
        Self::parse_text(text).map_err(RunError::Settings)
    }

    fn parse_text(text: &str) -> Result<ServerSpec, String> {
        let mut parts = text.split('+');
        let name = parts.next().unwrap_or_default().to_string();
        let mut spec = ServerSpec { name, http2: false, tls: false, http3: false };
        for flag in parts {
            match flag {
                "h2" => spec.http2 = true,
                "tls" => spec.tls = true,
                "h3" => (spec.http3, spec.tls) = (true, true),
                other => return Err(format!("'{text}': unknown server option '+{other}' (known: +h2, +h3, +tls)")),
            }
        }
        if spec.http2 && spec.http3 {
            return Err(format!("'{text}': +h2 and +h3 are two protocols; give one"));
        }
        if spec.tls && spec.name == "inproc" {
            return Err(format!("'{text}': an in-process call has no connection to encrypt"));
        }
        if spec.name.is_empty() {
            return Err(format!("'{text}' names no server"));
        }
        Ok(spec)
    }

    /// A user's endpoint's cells' server: named by its label, with the transport its flags ask for.
    pub fn of_endpoint(endpoint: &Endpoint) -> ServerSpec {
        let rest = !endpoint.is_grpc();
        ServerSpec {
            name: endpoint.label.clone(),
            http2: rest && endpoint.spec.http2,
            tls: endpoint.tls() || (rest && endpoint.spec.http3),
            http3: rest && endpoint.spec.http3,
        }
    }

    pub fn is_inproc(&self) -> bool {
        self.name == "inproc"
    }

    pub fn label(&self) -> String {
        let mut label = self.name.clone();
        if self.http2 {
            label += "+h2";
        }
        if self.http3 {
            label += "+h3"; // TLS is part of QUIC
        } else if self.tls {
            label += "+tls";
        }
        label
    }
}

/// One cell to measure.
#[derive(Debug, Clone)]
pub struct CellPlan {
    pub id: String,
    pub experiment: String,
    pub server: ServerSpec,
    pub workload: String,
    pub fields: LoadFields,
    pub repetitions: usize,
    pub x: Option<f64>,
    /// The experiment's swept parameter, if any.
    pub sweep: Option<String>,
    /// Its value in this cell, as the suite wrote it (`10ms`, `1.2`, `1000`).
    pub swept: Option<String>,
    /// The load tool, when the experiment names its `clients` (`callbench`, `wrk`...).
    pub client: Option<String>,
    pub kind: CellKind,
    /// The Ray cluster whose nodes make the calls together (None: this machine).
    pub cluster: Option<ClusterSpec>,
    /// A user's endpoint (`callbench run URL…`, a suite's server at a URL): `server` is its label;
    /// nothing is started.
    pub endpoint: Option<Arc<Endpoint>>,
    /// The suite's `[[call]]` its workload names, sent to a started server.
    pub call: Option<Arc<CallSpec>>,
}

/// What a cell times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellKind {
    /// Calls through the load engine (`server` a server of `servers/`, or `inproc`).
    Load,
    /// `server` names a program of `processing/`, timed as a process.
    Processing,
    /// A Python caller; `server` is its label (`requests+rust-axum`).
    Python(Mechanism),
    /// Calls by another load tool (`wrk`, `ghz`...) to `server`.
    Peer(String),
}

/// The cells of an experiment, in a stable order: swept value, workload, server.
pub fn cells(suite: &Suite, e: &ExperimentSpec) -> Result<Vec<CellPlan>, RunError> {
    cells_of(suite, e).map_err(RunError::Settings)
}

fn cells_of(suite: &Suite, e: &ExperimentSpec) -> Result<Vec<CellPlan>, String> {
    let base = e.load.over(&suite.defaults);
    let values: Vec<Option<&toml::Value>> = match &e.sweep {
        Some(sweep) => sweep.values.iter().map(Some).collect(),
        None => vec![None],
    };
    let python = e.kind == ExperimentKind::Python;
    let servers = e
        .servers
        .iter()
        .map(|s| match python {
            // A Python caller's label names its server after '+': not a server option.
            true => Mechanism::parse(s).map(|m| {
                (ServerSpec { name: m.label(), http2: false, tls: false, http3: false }, CellKind::Python(m), false)
            }),
            false if e.kind == ExperimentKind::Processing => {
                ServerSpec::parse_text(s).map(|x| (x, CellKind::Processing, false))
            }
            // A user's endpoint (one per call): its cells get the one for their workload below.
            false => match suite.endpoints.iter().find(|t| t.label == *s) {
                Some(t) => Ok((ServerSpec::of_endpoint(t), CellKind::Load, true)),
                None => ServerSpec::parse_text(s).map(|x| (x, CellKind::Load, false)),
            },
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Every client gets the same cells; none named: callbench's engine, unlabelled.
    let clients: Vec<Option<&String>> = match e.clients.is_empty() {
        true => vec![None],
        false => e.clients.iter().map(Some).collect(),
    };
    let mut out = Vec::new();
    for value in values {
        let mut fields = base.clone();
        let mut suffix = String::new();
        let mut x = None;
        let mut swept = None;
        if let (Some(sweep), Some(value)) = (&e.sweep, value) {
            fields.set(&sweep.param, value)?;
            swept = Some(value_text(value));
            suffix = format!("/{}={}", sweep.param, value_text(value));
            // A duration (a swept rtt) is charted in milliseconds.
            // Only a string with a unit: "1.2" (a TLS version) is not 1.2 s.
            let millis = value
                .as_str()
                .filter(|t| t.ends_with(|c: char| c.is_ascii_alphabetic()))
                .and_then(|t| parse::duration(t).ok())
                .map(|d| d.as_secs_f64() * 1e3);
            x = value.as_integer().map(|v| v as f64).or(value.as_float()).or(millis);
        }
        for workload in &e.workloads {
            for (server, kind, endpoint) in &servers {
                for client in &clients {
                    let kind = match client {
                        Some(c) if c.as_str() != "callbench" => CellKind::Peer(c.to_string()),
                        _ => kind.clone(),
                    };
                    let mut plan = CellPlan {
                        id: String::new(),
                        experiment: e.id.clone(),
                        server: server.clone(),
                        workload: workload.clone(),
                        fields: fields.clone(),
                        repetitions: fields.repetitions.unwrap_or(suite.repetitions).max(1),
                        x,
                        sweep: e.sweep.as_ref().map(|s| s.param.clone()),
                        swept: swept.clone(),
                        cluster: e.cluster.clone().filter(|_| kind == CellKind::Load),
                        client: client.cloned(),
                        kind,
                        endpoint: match endpoint {
                            true => Some(
                                suite
                                    .endpoints
                                    .iter()
                                    .find(|t| t.label == server.name && t.workload == *workload)
                                    .cloned()
                                    .ok_or_else(|| format!("{}: no endpoint for call '{workload}'", server.name))?,
                            ),
                            false => None,
                        },
                        call: suite.call(workload).cloned().map(Arc::new).filter(|_| !endpoint),
                    };
                    plan.id = format!("{}/{}/{}{}", e.id, workload, plan.label(), suffix);
                    out.push(plan);
                }
            }
        }
    }
    Ok(out)
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A rate: calls/s, or `"P% of EXPERIMENT"` resolved by `lookup(experiment)` (the slowest
/// server's median throughput there, for the cell's workload).
pub fn resolve_rate(value: &toml::Value, lookup: impl Fn(&str) -> Option<f64>) -> Result<f64, RunError> {
    rate_of(value, lookup).map_err(RunError::Settings)
}

fn rate_of(value: &toml::Value, lookup: impl Fn(&str) -> Option<f64>) -> Result<f64, String> {
    if let Some(r) = value.as_float().or(value.as_integer().map(|i| i as f64)) {
        return if r > 0.0 { Ok(r) } else { Err(format!("rate {r} must be above 0")) };
    }
    let text = value.as_str().ok_or(format!("rate {value} must be a number or \"P% of EXPERIMENT\""))?;
    let (percent, experiment) =
        text.split_once("% of ").ok_or(format!("rate '{text}' must be a number or \"P% of EXPERIMENT\""))?;
    let share: f64 = percent.trim().parse().map_err(|_| format!("rate '{text}': '{percent}' is not a percentage"))?;
    if !(share > 0.0 && share <= 1000.0) {
        return Err(format!("rate '{text}': the share must be above 0%"));
    }
    let capacity = lookup(experiment.trim())
        .ok_or(format!("rate '{text}': no throughput was measured in '{}' for this workload", experiment.trim()))?;
    Ok(capacity * share / 100.0)
}

impl CellPlan {
    /// Whether the client is the engine's one thread spinning through the window: open loop with
    /// calls due less than 2 ms apart (the engine's precise clock spins below that), on this
    /// machine's loopback (across an emulated link its forwarder shares the client's CPUs; a
    /// cluster's clients are elsewhere).
    pub fn client_spins(&self, rate: Option<f64>) -> bool {
        self.kind == CellKind::Load
            && self.cluster.is_none()
            && self.fields.network.is_none()
            && rate.is_some_and(|r| r > 500.0)
    }

    /// Whether the experiment's unrecorded warm-up round runs this cell: load against a server.
    pub fn in_warm_up_round(&self) -> bool {
        self.kind == CellKind::Load && !self.server.is_inproc()
    }

    /// The cell as the warm-up round runs it: a timed cell with a warm-up measures for its
    /// warm-up's length (the round heats the server and the machine; it measures nothing), any
    /// other as a repetition.
    pub fn warm_up_round(&self) -> CellPlan {
        let mut p = self.clone();
        let warmup = p.fields.warmup.as_deref().and_then(|w| parse::duration(w).ok());
        if p.fields.calls.is_none() && warmup.is_some_and(|w| !w.is_zero()) {
            p.fields.duration = p.fields.warmup.clone();
        }
        p
    }

    /// The cell's series: its server, after its client when the experiment names clients
    /// (`wrk+rust-actix`, as a Python caller's `requests+rust-axum`).
    pub fn label(&self) -> String {
        match &self.client {
            Some(client) => format!("{client}+{}", self.server.label()),
            None => self.server.label(),
        }
    }

    /// The spec of one repetition against `addr` (None for in-process), at `rate` if open loop.
    /// The `callbench load` spec of one repetition against the server at `addr` that speaks
    /// `protocol` (no address: in-process).
    pub fn load_spec(
        &self,
        addr: Option<SocketAddr>,
        protocol: Protocol,
        rate: Option<f64>,
    ) -> Result<LoadSpec, RunError> {
        self.load_spec_text(addr, protocol, rate).map_err(RunError::Settings)
    }

    fn load_spec_text(
        &self,
        addr: Option<SocketAddr>,
        protocol: Protocol,
        rate: Option<f64>,
    ) -> Result<LoadSpec, String> {
        let f = &self.fields;
        let raw = addr.is_some() && protocol == Protocol::Raw;
        let mut spec = LoadSpec {
            target: match (addr, protocol) {
                (None, _) => format!("inproc:{}", self.workload),
                (Some(a), Protocol::Grpc) => format!("{}://{a}", if self.server.tls { "grpcs" } else { "grpc" }),
                (Some(a), Protocol::Rest) => format!("{}://{a}", if self.server.tls { "https" } else { "http" }),
                // The echo workload's payload each way (the only workload a raw server takes).
                (Some(a), Protocol::Raw) => {
                    format!("raw://{a}?size={}", f.payload_size.unwrap_or(RAW_DEFAULT_SIZE).max(1))
                }
            },
            // The reference servers' certificates are self-signed, made at their start.
            insecure: self.server.tls,
            workload: addr.filter(|_| !raw).map(|_| self.workload.clone()),
            http2: self.server.http2,
            http3: self.server.http3,
            gzip: f.gzip.unwrap_or(false) && !raw,
            ..LoadSpec::default()
        };
        if let (Some(call), Some(_)) = (&self.call, addr) {
            // A suite's own call: its request to this server, its success its status (no preset, no contract check).
            let mut own = call.spec(&spec.target, protocol).map_err(|e| e.to_string())?;
            (own.insecure, own.http2, own.http3, own.gzip) = (spec.insecure, spec.http2, spec.http3, spec.gzip);
            self.apply_load(&mut own, rate)?;
            return Ok(own);
        }
        self.apply_load(&mut spec, rate)?;
        let defaults = PresetOptions::default();
        spec.preset = PresetOptions {
            payload_size: f.payload_size.unwrap_or(defaults.payload_size),
            ntimes: f.ntimes.unwrap_or(defaults.ntimes),
            user_id: f.user_id.unwrap_or(defaults.user_id),
            records: f.records.unwrap_or(defaults.records),
        };
        Ok(spec)
    }

    /// The spec of one repetition of an endpoint's cell: the endpoint's call as the user gave it
    /// (a success is its status: no preset, no contract check), under this cell's load.
    pub fn endpoint_spec(&self, rate: Option<f64>) -> Result<LoadSpec, RunError> {
        self.endpoint_spec_text(rate).map_err(RunError::Settings)
    }

    fn endpoint_spec_text(&self, rate: Option<f64>) -> Result<LoadSpec, String> {
        let endpoint = self.endpoint.as_ref().ok_or_else(|| format!("cell {}: not an endpoint", self.id))?;
        let mut spec = endpoint.spec.clone();
        spec.gzip = self.fields.gzip.unwrap_or(false);
        self.apply_load(&mut spec, rate)?;
        Ok(spec)
    }

    /// The cell's load on `spec`: calls in flight, connections, how long, at what rate.
    fn apply_load(&self, spec: &mut LoadSpec, rate: Option<f64>) -> Result<(), String> {
        let f = &self.fields;
        let dur = |t: &Option<String>| t.as_deref().map(parse::duration).transpose();
        // Unset with --connections/--streams: the engine derives it (HTTP/2: connections × streams).
        spec.concurrency = f.concurrency.or((f.connections.is_none() && f.streams.is_none()).then_some(1));
        spec.calls = self.calls();
        spec.duration = dur(&f.duration)?;
        if f.calls.is_none() && spec.calls.is_some() {
            spec.duration = None; // a life-run repetition is one whole run: its calls end it
        }
        spec.warmup = dur(&f.warmup)?.unwrap_or(Duration::ZERO);
        spec.rate = rate;
        spec.poisson = f.poisson.unwrap_or(false);
        spec.connections = f.connections;
        spec.streams = f.streams;
        spec.new_connection_per_call = f.new_connection_per_call.unwrap_or(false);
        spec.tls_version = f.tls_version.as_deref().map(str::parse).transpose()?;
        if let Some(t) = dur(&f.timeout)? {
            spec.timeout = t;
        }
        if let Some(io) = &f.io {
            spec.io = io.parse()?;
        }
        if spec.calls.is_none() && spec.duration.is_none() {
            spec.duration = Some(Duration::from_secs(1));
        }
        Ok(())
    }

    /// The cell's settings as results.json records them.
    pub fn params(&self, rate: Option<f64>) -> BTreeMap<String, Value> {
        let f = &self.fields;
        if let CellKind::Python(m) = &self.kind {
            let ntimes = f.ntimes.unwrap_or(1);
            let mut p = BTreeMap::from([
                ("client".to_string(), json!(m.client)),
                (
                    "calls".to_string(),
                    json!(f.calls.unwrap_or_else(|| default_calls(&self.workload, ntimes, m.transport()))),
                ),
            ]);
            if let Some(server) = &m.server {
                p.insert("server".into(), json!(server));
            }
            if self.workload == "life" {
                p.insert("ntimes".into(), json!(ntimes));
            }
            if let Some(w) = f.warmup_iterations {
                p.insert("warmup_calls".into(), json!(w));
            }
            return p;
        }
        if self.kind == CellKind::Processing {
            let start = f.start.clone().unwrap_or_else(|| "warm".into());
            let mut p = BTreeMap::from([
                ("server".to_string(), json!(self.server.name)),
                ("user_id".to_string(), json!(f.user_id.unwrap_or(9999))),
                ("start".to_string(), json!(start)),
            ]);
            if start == "warm" {
                p.insert("iterations".into(), json!(f.iterations.unwrap_or(50)));
                p.insert("warmup_iterations".into(), json!(f.warmup_iterations.unwrap_or(20)));
            }
            return p;
        }
        let mut p = BTreeMap::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                p.insert(k.to_string(), v);
            }
        };
        put("server", Some(json!(self.server.name)));
        put("target", self.endpoint.as_ref().map(|e| json!(e.spec.target)));
        put("client", self.client.as_ref().map(|c| json!(c)));
        put("http2", Some(json!(self.server.http2)));
        put("tls", self.server.tls.then_some(json!(true)));
        put("http3", self.server.http3.then_some(json!(true)));
        put(
            "concurrency",
            f.concurrency.or((f.connections.is_none() && f.streams.is_none()).then_some(1)).map(|v| json!(v)),
        );
        put("calls", self.calls().map(|v| json!(v)));
        // A life-run repetition's calls end it, not the duration (see `calls`).
        let whole_run = f.calls.is_none() && self.calls().is_some();
        put("duration", f.duration.as_ref().filter(|_| !whole_run).map(|v| json!(v)));
        put("warmup", f.warmup.as_ref().map(|v| json!(v)));
        put("rate", rate.map(|v| json!((v * 10.0).round() / 10.0)));
        put("rate_spec", f.rate.as_ref().map(|v| json!(value_text(v))));
        put("poisson", f.poisson.map(|v| json!(v)));
        put("connections", f.connections.map(|v| json!(v)));
        put("streams", f.streams.map(|v| json!(v)));
        put("new_connection_per_call", f.new_connection_per_call.map(|v| json!(v)));
        put("tls_version", f.tls_version.as_ref().map(|v| json!(v)));
        put("io", f.io.as_ref().map(|v| json!(v)));
        put("gzip", f.gzip.map(|v| json!(v)));
        put("payload_size", f.payload_size.map(|v| json!(v)));
        put("ntimes", f.ntimes.map(|v| json!(v)));
        put("user_id", f.user_id.map(|v| json!(v)));
        put("records", f.records.map(|v| json!(v)));
        // A user's endpoint runs as it runs: callbench sets no mode on it.
        put("mode", self.endpoint.is_none().then(|| json!(self.mode())));
        put("network", f.network.as_ref().map(|n| json!(n.to_string())));
        put("cluster", self.cluster.as_ref().map(|c| json!(c.to_string())));
        // A swept key of the network (rtt, bandwidth, ...) as written, with its unit: the report shows it.
        if let (Some(param), Some(text)) = (&self.sweep, &self.swept) {
            p.entry(param.clone()).or_insert_with(|| json!(text));
        }
        p
    }

    /// Calls a repetition makes: the suite's, else for life-run one run over its boards, whatever
    /// the duration (every board stepped once: the boards' work differs, so a part of a run would
    /// weigh some more).
    pub fn calls(&self) -> Option<u64> {
        let run = || u64::from(callbench_workloads::life::run_calls(self.fields.ntimes.unwrap_or(1)));
        self.fields.calls.or_else(|| (self.workload == "life-run" && self.endpoint.is_none()).then(run))
    }

    pub fn mode(&self) -> String {
        self.fields.mode.clone().unwrap_or_else(|| "preloaded".into())
    }
}

#[cfg(test)]
mod tests;
