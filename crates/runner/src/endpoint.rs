//! A user's own endpoint (`callbench run URL…`): measured with the whole method of a run —
//! interleaved repetitions, intervals, both sides' CPU, verdicts — but not started, pinned or
//! verified by callbench. A call succeeds on its status (2xx, gRPC OK: there are no contract
//! vectors for a user's API), and the server's CPU is read only from the processes the user names
//! (`--server-pid`, each with its process group).

use crate::RunError;
use callbench_load::{LoadSpec, Unwatched};
use callbench_results::model::{EndpointRecord, ServerRecord};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Its series in the results: `rest`, `grpc`, or the name given as `NAME=URL`.
    pub label: String,
    /// What a call sends: the target and `callbench load`'s call flags; each experiment sets the load.
    pub spec: LoadSpec,
    /// The server's processes, as given (`--server-pid`); empty: its CPU is not measured.
    pub server_pids: Vec<i32>,
    /// `rest` or `grpc`, and what a call is (`GET /students`), as the first call found them.
    pub protocol: String,
    pub call: String,
    /// What the calls send, when not the same request every call (as the first call found it).
    pub data: Option<String>,
    /// The workload its cells are listed under: `call` for `callbench run URL…`, a suite's call's name.
    pub workload: String,
}

impl Endpoint {
    /// An endpoint not probed yet: its protocol from the URL's scheme.
    pub fn new(label: String, spec: LoadSpec, server_pids: Vec<i32>) -> Endpoint {
        let grpc = spec.target.starts_with("grpc://") || spec.target.starts_with("grpcs://");
        let protocol = if grpc { "grpc" } else { "rest" }.to_string();
        Endpoint { label, spec, server_pids, protocol, call: String::new(), data: None, workload: "call".into() }
    }

    pub fn is_grpc(&self) -> bool {
        self.protocol == "grpc"
    }

    pub fn tls(&self) -> bool {
        self.spec.target.starts_with("https://") || self.spec.target.starts_with("grpcs://")
    }

    /// Whether it is on this machine's loopback (127.0.0.0/8, ::1, localhost).
    pub fn on_loopback(&self) -> bool {
        use callbench_load::parse::TargetUrl;
        let host = match callbench_load::parse::target(&self.spec.target) {
            Ok(TargetUrl::Http { host, .. } | TargetUrl::Grpc { host, .. }) => host,
            _ => return false,
        };
        host.eq_ignore_ascii_case("localhost")
            || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// Whether its calls share connections (HTTP/2, HTTP/3, gRPC), so that a fixed number of
    /// connections can carry any number of calls in flight.
    pub fn multiplexes(&self) -> bool {
        self.is_grpc() || self.spec.http2 || self.spec.http3
    }

    /// The server's processes and every process in their groups (a server's workers), each once.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> =
            self.server_pids.iter().flat_map(|&pid| callbench_machine::process_group::group_pids(pid)).collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// The first `--server-pid` that no longer runs, if any.
    pub fn gone(&self) -> Option<i32> {
        self.server_pids.iter().copied().find(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
    }

    /// Its record in results.json.
    pub fn record(&self) -> ServerRecord {
        ServerRecord {
            name: self.label.clone(),
            language: String::new(),
            framework: String::new(),
            protocol: self.protocol.clone(),
            versions: BTreeMap::new(),
            verify: None,
            failures: Vec::new(),
            note: String::new(),
            endpoint: Some(EndpointRecord {
                url: self.spec.target.clone(),
                call: self.call.clone(),
                server_pids: self.server_pids.clone(),
                data: self.data.clone(),
            }),
        }
    }

    /// One call, before anything is measured: the target must answer it as a success. Learns what
    /// a call is; the error is one line with the answer (`HTTP 404`, `grpc_12`, `connect`).
    pub async fn probe(&mut self, cancel: Arc<AtomicBool>) -> Result<(), RunError> {
        let mut spec = self.spec.clone();
        (spec.calls, spec.concurrency, spec.duration) = (Some(1), Some(1), None);
        spec.warmup = std::time::Duration::ZERO;
        let failed = |why: String| RunError::Endpoint(format!("{} ({}): {why}", self.label, self.spec.target));
        let (report, _) =
            callbench_load::execute(&spec, cancel, &Unwatched).await.map_err(|e| failed(e.to_string()))?;
        if report.summary.calls.ok == 0 {
            let answer = report.summary.errors.keys().next().map_or("no answer".to_string(), |kind| answer_text(kind));
            return Err(failed(format!("the first call failed: {answer}")));
        }
        self.call = report.call;
        self.data = (report.data.kind != "one").then(|| report.data.describe());
        self.protocol = if report.protocol == "grpc" { "grpc" } else { "rest" }.into();
        Ok(())
    }
}

/// A failure's kind as a person reads it: `http_404` is `HTTP 404`, `grpc_12` `gRPC status 12`.
fn answer_text(kind: &str) -> String {
    if let Some(status) = kind.strip_prefix("http_") {
        format!("HTTP {status}")
    } else if let Some(code) = kind.strip_prefix("grpc_") {
        format!("gRPC status {code}")
    } else {
        kind.replace('_', " ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str) -> Endpoint {
        Endpoint::new("x".into(), LoadSpec { target: url.into(), ..LoadSpec::default() }, vec![])
    }

    #[test]
    fn the_scheme_says_the_protocol_and_tls() {
        let grpcs = endpoint("grpcs://127.0.0.1:9/pkg.S/M");
        assert!(grpcs.is_grpc() && grpcs.tls() && grpcs.multiplexes());
        let http = endpoint("http://127.0.0.1:9/students");
        assert!(!http.is_grpc() && !http.tls() && !http.multiplexes());
        let mut h2 = endpoint("http://127.0.0.1:9/students");
        h2.spec.http2 = true;
        assert!(h2.multiplexes());
    }

    #[test]
    fn the_record_names_the_url_and_the_pids() {
        let mut e = Endpoint::new(
            "rest".into(),
            LoadSpec { target: "http://127.0.0.1:9/s".into(), ..LoadSpec::default() },
            vec![std::process::id() as i32],
        );
        e.call = "GET /s".into();
        let record = e.record();
        let endpoint = record.endpoint.unwrap();
        assert_eq!((endpoint.url.as_str(), endpoint.call.as_str()), ("http://127.0.0.1:9/s", "GET /s"));
        assert_eq!(record.protocol, "rest");
        assert!(record.verify.is_none());
        assert_eq!(e.gone(), None);
        assert!(e.pids().contains(&(std::process::id() as i32)));
    }

    #[test]
    fn failures_read_as_answers() {
        assert_eq!(answer_text("http_404"), "HTTP 404");
        assert_eq!(answer_text("grpc_12"), "gRPC status 12");
        assert_eq!(answer_text("connect"), "connect");
    }
}
