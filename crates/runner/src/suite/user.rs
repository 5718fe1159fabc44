//! A user's servers and calls in a suite file: `[[server]]` tables (started by a command, as a
//! built-in server is, or already running at a URL) and `[[call]]` tables (what one call sends, over
//! REST and over gRPC), so that a suite in any folder measures any service with the run's method.
//!
//! ```toml
//! [[server]]
//! name = "orders-rest"
//! protocol = "rest"
//! start = ["./orders", "--listen", "{host}:{port}"]   # in the suite's folder; {host} {port} {workers}
//!
//! [[server]]
//! name = "orders-grpc"
//! protocol = "grpc"
//! url = "grpc://127.0.0.1:9090"                        # running already; its CPU read when `pids` names it
//! pids = [4242]
//!
//! [[call]]
//! name = "get-order"
//! rest = { method = "GET", path = "/v1/orders/7" }
//! grpc = { method = "shop.Orders/GetOrder", message = '{"id": 7}', proto = ["orders.proto"] }
//! ```

use callbench_launcher::manifest::{Command, Manifest, Protocol, TlsSupport};
use callbench_load::LoadSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `[[server]]`: a server of the user's, named in experiments' `servers` as a built-in one is.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserServer {
    /// Letters, digits, `-`, `_` or `.`: its cells' and reports' name.
    pub name: String,
    /// `rest` or `grpc`: which part of a `[[call]]` it is sent.
    pub protocol: Protocol,
    /// The command that starts it, run in the suite file's folder with `{host}`, `{port}` and
    /// `{workers}` filled in: callbench starts it, waits until it accepts connections, pins it to the
    /// server CPUs, measures its CPU (its process group's), puts it behind an emulated link when an
    /// experiment asks, and stops it.
    #[serde(default)]
    pub start: Vec<String>,
    /// More environment for `start`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Arguments added to `start` that make it serve TLS (`+tls` cells); its certificate is not checked.
    #[serde(default)]
    pub tls: Option<Vec<String>>,
    /// Where it runs already (`http(s)://HOST:PORT`, `grpc(s)://HOST:PORT`): not started, not pinned.
    #[serde(default)]
    pub url: Option<String>,
    /// With `url`: the processes whose CPU is its CPU (each with its process group).
    #[serde(default)]
    pub pids: Vec<i32>,
    /// It implements callbench's contract (contract/): verified with the contract's vectors before it
    /// is measured, and called with the built-in workloads (auth, students…) as well as `[[call]]`s.
    #[serde(default)]
    pub contract: bool,
    /// Its language, for the reports (`go`).
    #[serde(default)]
    pub language: String,
    /// Its framework, for the reports (`net/http`).
    #[serde(default)]
    pub framework: String,
}

/// `[[call]]`: what one call sends, named in experiments' `workloads`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// Letters, digits, `-`, `_` or `.`: named in experiments' `workloads`, and in its cells' ids.
    pub name: String,
    /// Sent to REST servers.
    #[serde(default)]
    pub rest: Option<RestCall>,
    /// Sent to gRPC servers.
    #[serde(default)]
    pub grpc: Option<GrpcCall>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestCall {
    /// GET, or POST when there is a body.
    #[serde(default)]
    pub method: Option<String>,
    /// The path and query, `/v1/orders/7?full=1`.
    pub path: String,
    /// `Name: value` lines.
    #[serde(default)]
    pub headers: Vec<String>,
    /// The request body (JSON, or any text).
    #[serde(default)]
    pub body: Option<String>,
    /// An NDJSON file of bodies, one per line, used in turn (instead of `body`); relative to the suite's folder.
    #[serde(default)]
    pub data_lines: Option<PathBuf>,
    /// `body` (or each line of `data_lines`) is a template filled in per call: `{{call}}`, `{{caller}}`,
    /// `{{int A B}}`, `{{string N}}`, `{{uuid}}`.
    #[serde(default)]
    pub template: bool,
    /// The statuses that count as success (default: any 2xx).
    #[serde(default)]
    pub status: Vec<u16>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrpcCall {
    /// `package.Service/Method`.
    pub method: String,
    /// The request message as JSON (default `{}`).
    #[serde(default)]
    pub message: Option<String>,
    /// An NDJSON file of messages, one per line, used in turn (instead of `message`); relative to the suite's folder.
    #[serde(default)]
    pub data_lines: Option<PathBuf>,
    /// `message` (or each line of `data_lines`) is a template filled in per call, as a REST body's.
    #[serde(default)]
    pub template: bool,
    /// `.proto` files that describe it, relative to the suite's folder; none: server reflection.
    #[serde(default)]
    pub proto: Vec<PathBuf>,
    /// Where their imports are found, relative to the suite's folder.
    #[serde(default)]
    pub import_paths: Vec<PathBuf>,
    /// A compiled FileDescriptorSet instead of `proto`.
    #[serde(default)]
    pub protoset: Option<PathBuf>,
    /// `Name: value` metadata lines.
    #[serde(default)]
    pub metadata: Vec<String>,
}

impl UserServer {
    /// Started by callbench (a `start` command), not found at a `url`.
    pub fn started(&self) -> bool {
        self.url.is_none()
    }

    /// As a built-in server's manifest, so that it is started, pinned, measured and stopped the same
    /// way; `folder` is the suite's (its working directory; a relative program path is found there).
    pub fn manifest(&self, folder: &Path) -> Manifest {
        let mut command = self.start.clone();
        if let Some(program) = command.first_mut().filter(|p| p.contains('/') && Path::new(p.as_str()).is_relative()) {
            *program = folder.join(&*program).to_string_lossy().into_owned();
        }
        Manifest {
            name: self.name.clone(),
            language: self.language.clone(),
            framework: self.framework.clone(),
            protocol: self.protocol,
            description: String::new(),
            note: String::new(),
            supported: true,
            unsupported_reason: String::new(),
            build: None,
            start: Command { command, env: self.env.clone() },
            versions: Default::default(),
            deviations: Vec::new(),
            tls: self.tls.clone().map(|args| TlsSupport { args, http3: false }),
            dir: folder.to_path_buf(),
            cwd: Some(folder.to_path_buf()),
            calls_only: !self.contract,
        }
    }
}

/// Why a suite's call cannot be made to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The call has no `rest = { … }` or `grpc = { … }` for the server's protocol.
    NoPart { call: String, protocol: Protocol },
    /// A raw server (an echo) takes no calls.
    RawServer { call: String },
    /// A `headers` or `metadata` line is not `Name: value`.
    BadHeader { call: String, why: String },
    /// The server's URL is outside loopback, and `--allow-remote` was not given.
    NotLoopback { server: String, url: String },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::NoPart { call, protocol } => write!(f, "call '{call}' has no {protocol} = {{ … }}"),
            CallError::RawServer { call } => write!(f, "call '{call}': raw servers take no calls"),
            CallError::BadHeader { call, why } => write!(f, "call '{call}': {why}"),
            CallError::NotLoopback { server, url } => {
                write!(f, "server '{server}' at {url} is not on this machine's loopback; give --allow-remote")
            }
        }
    }
}

impl std::error::Error for CallError {}

impl CallSpec {
    /// The `callbench load` spec of this call to `base` (`http://HOST:PORT`, `grpc://HOST:PORT`)
    /// over `protocol`: the load is set by the cell.
    pub fn spec(&self, base: &str, protocol: Protocol) -> Result<LoadSpec, CallError> {
        let base = base.trim_end_matches('/');
        let lines = |lines: &[String]| -> Result<Vec<(String, String)>, CallError> {
            lines
                .iter()
                .map(|l| callbench_load::parse::header(l))
                .collect::<Result<_, _>>()
                .map_err(|why| CallError::BadHeader { call: self.name.clone(), why: why.to_string() })
        };
        let no_part = || CallError::NoPart { call: self.name.clone(), protocol };
        match protocol {
            Protocol::Rest => {
                let rest = self.rest.as_ref().ok_or_else(no_part)?;
                Ok(LoadSpec {
                    target: format!("{base}/{}", rest.path.trim_start_matches('/')),
                    method: rest.method.clone(),
                    headers: lines(&rest.headers)?,
                    data: rest.body.clone(),
                    data_lines: rest.data_lines.clone(),
                    template: rest.template,
                    expect_status: rest.status.clone(),
                    ..LoadSpec::default()
                })
            }
            Protocol::Grpc => {
                let grpc = self.grpc.as_ref().ok_or_else(no_part)?;
                Ok(LoadSpec {
                    target: format!("{base}/{}", grpc.method.trim_start_matches('/')),
                    headers: lines(&grpc.metadata)?,
                    data: grpc.message.clone().or_else(|| grpc.data_lines.is_none().then(|| "{}".into())),
                    data_lines: grpc.data_lines.clone(),
                    template: grpc.template,
                    protos: grpc.proto.clone(),
                    import_paths: grpc.import_paths.clone(),
                    protoset: grpc.protoset.clone(),
                    ..LoadSpec::default()
                })
            }
            Protocol::Raw => Err(CallError::RawServer { call: self.name.clone() }),
        }
    }

    /// Its files' paths made absolute from the suite's folder.
    pub(super) fn in_folder(&mut self, folder: &Path) {
        let join = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = folder.join(&*p);
            }
        };
        if let Some(rest) = &mut self.rest {
            rest.data_lines.iter_mut().for_each(join);
        }
        if let Some(grpc) = &mut self.grpc {
            grpc.data_lines.iter_mut().for_each(join);
            grpc.proto.iter_mut().for_each(join);
            grpc.import_paths.iter_mut().for_each(join);
            grpc.protoset.iter_mut().for_each(join);
        }
    }
}
