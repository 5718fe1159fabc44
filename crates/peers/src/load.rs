//! What a cell asks of a client, in terms every tool shares, and the command a tool runs for it.

use crate::error::PeerError;
use std::collections::BTreeMap;
use std::time::Duration;

/// How calls travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// REST over HTTP/1.1.
    Http1,
    /// REST over HTTP/2 (h2c with prior knowledge in the clear, h2 by ALPN over TLS).
    Http2,
    /// gRPC (HTTP/2).
    Grpc,
}

/// One call of the cell's workload, as every tool needs it.
#[derive(Debug, Clone)]
pub struct Call {
    /// REST: the method, the path and the JSON body (if any).
    pub method: String,
    pub path: String,
    pub body: Option<Vec<u8>>,
    /// gRPC: `package.Service/Method`, the request message encoded, and the contract's
    /// `FileDescriptorSet` (tools that need the schema read it from a file).
    pub grpc_method: String,
    pub grpc_message: Vec<u8>,
    pub descriptor_set: Vec<u8>,
}

/// The load of one cell.
#[derive(Debug, Clone)]
pub struct Load {
    pub protocol: Protocol,
    pub tls: bool,
    /// The server's address: `127.0.0.1:8080`, `[::1]:8080`.
    pub authority: String,
    pub call: Call,
    /// Calls in flight (closed loop) or the most the tool may have in flight (open loop).
    pub concurrency: usize,
    /// Connections, when the cell sets them (else each tool's own way: most open one per call in flight).
    pub connections: Option<usize>,
    /// How long the tool runs (with `calls`: the most it may take).
    pub duration: Duration,
    /// A count of calls instead of a duration, for tools that make one ([`crate::Tool::counts_calls`]).
    pub calls: Option<u64>,
    /// The start of the run that is not measured (only tools with a warm-up of their own leave it out).
    pub warmup: Duration,
    /// Open loop: calls/s in all.
    pub rate: Option<f64>,
    /// Ask for gzip-compressed answers.
    pub gzip: bool,
    /// A new connection for every call (no keep-alive), as ab runs without `-k`.
    pub new_connection_per_call: bool,
    /// The CPUs the tool is pinned to: tools with threads get one per CPU.
    pub threads: usize,
    /// The working directory of the run: the files of the [`Invocation`] go there.
    pub dir: std::path::PathBuf,
    /// The checkout: the seed articles' clients live in its `clients/` folder.
    pub repo: std::path::PathBuf,
    /// With `tls`: a PEM file of the server's certificate, for clients that check it.
    pub ca_cert: Option<std::path::PathBuf>,
}

impl Load {
    /// Err for a tool that always keeps its connections when the cell wants one per call.
    pub fn keeps_connections(&self, tool: &str) -> Result<(), PeerError> {
        match self.new_connection_per_call {
            true => Err(PeerError::Unsupported(format!(
                "{tool} always keeps its connections open (no new connection per call)"
            ))),
            false => Ok(()),
        }
    }

    pub fn url(&self) -> String {
        format!("{}://{}{}", if self.tls { "https" } else { "http" }, self.authority, self.call.path)
    }

    /// Whole seconds, at least one (tools that take seconds only).
    pub fn seconds(&self) -> u64 {
        self.duration.as_secs_f64().round().max(1.0) as u64
    }

    /// The `Content-Type` of the REST body.
    pub fn content_type(&self) -> &'static str {
        "application/json"
    }

    /// The `Accept-Encoding` every REST tool sends, so no tool's default decides: several (Go's
    /// transport in hey and vegeta, Python's requests) ask for gzip unless told.
    pub fn accept_encoding(&self) -> &'static str {
        if self.gzip {
            "gzip"
        } else {
            "identity"
        }
    }

    /// Calls in flight per connection, rounded up, when the cell sets connections (HTTP/2 and gRPC).
    pub fn streams_per_connection(&self) -> usize {
        let connections = self.connections.unwrap_or(1).max(1);
        self.concurrency.div_ceil(connections).max(1)
    }
}

/// A tool's command for one run.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub argv: Vec<String>,
    /// Files the command reads, written into the run's directory before it starts (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Files the tool writes its report into (read after it ends, for [`crate::Tool::parse`]).
    pub outputs: Vec<String>,
    /// A second command that turns the run's raw output into the report (`vegeta report`): run
    /// after the tool ends, not measured; its stdout is the report.
    pub report: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    /// Settings the tool could not express exactly, and what was done instead.
    pub approximations: Vec<String>,
}

impl Invocation {
    pub fn new(argv: impl IntoIterator<Item = impl Into<String>>) -> Invocation {
        Invocation { argv: argv.into_iter().map(Into::into).collect(), ..Invocation::default() }
    }

    pub fn arg(&mut self, a: impl Into<String>) -> &mut Self {
        self.argv.push(a.into());
        self
    }

    pub fn args(&mut self, a: impl IntoIterator<Item = impl Into<String>>) -> &mut Self {
        self.argv.extend(a.into_iter().map(Into::into));
        self
    }

    pub fn approximated(&mut self, why: impl Into<String>) -> &mut Self {
        self.approximations.push(why.into());
        self
    }

    /// The command line as a shell would show it (for the record).
    pub fn command_line(&self) -> String {
        self.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// What a run of a tool left: its output streams and the report files it wrote.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub files: BTreeMap<String, String>,
}

impl Output {
    pub fn file(&self, name: &str) -> Result<&str, PeerError> {
        self.files.get(name).map(String::as_str).ok_or_else(|| PeerError::Report(format!("it wrote no {name}")))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A cell's load for adapter tests: students over REST, 50 in flight, 10 s.
    pub fn load(protocol: Protocol) -> Load {
        Load {
            protocol,
            tls: false,
            authority: "127.0.0.1:8080".into(),
            call: Call {
                method: "GET".into(),
                path: "/students".into(),
                body: None,
                grpc_method: "callbench.v1.Students/List".into(),
                grpc_message: vec![],
                descriptor_set: vec![1, 2, 3],
            },
            concurrency: 50,
            connections: None,
            duration: Duration::from_secs(10),
            calls: None,
            warmup: Duration::ZERO,
            rate: None,
            gzip: false,
            new_connection_per_call: false,
            threads: 1,
            dir: "/tmp/run".into(),
            repo: "/src/callbench".into(),
            ca_cert: None,
        }
    }

    /// The auth call: a PUT with a JSON body.
    pub fn auth(protocol: Protocol) -> Load {
        let mut l = load(protocol);
        l.call.method = "PUT".into();
        l.call.path = "/auth/4242".into();
        l.call.body = Some(br#"{"password":"password-4242"}"#.to_vec());
        l.call.grpc_method = "callbench.v1.Auth/Test".into();
        l
    }

    /// A recorded output of the real tool, from `fixtures/`.
    pub fn fixture(name: &str) -> String {
        let path = std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("fixtures")
        .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_quotes_what_a_shell_would_split() {
        let i = Invocation::new(["wrk", "-H", "Accept-Encoding: gzip", "http://127.0.0.1:80/x"]);
        assert_eq!(i.command_line(), "wrk -H 'Accept-Encoding: gzip' http://127.0.0.1:80/x");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn streams_per_connection_round_up() {
        let mut l = testing::load(Protocol::Grpc);
        assert_eq!(l.streams_per_connection(), 50);
        l.connections = Some(3);
        assert_eq!(l.streams_per_connection(), 17);
        l.connections = Some(50);
        assert_eq!((l.streams_per_connection(), l.seconds()), (1, 10));
    }
}
