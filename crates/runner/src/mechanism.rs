//! How a Python experiment's caller reaches the work (`pyo3`, `python`, `requests+SERVER`,
//! `httpx+SERVER`, `grpcio+SERVER`), the workloads it can call and how many calls a repetition
//! makes: what a suite names, apart from the runner that starts the Python process (python.rs).

use callbench_results::model::ServerRecord;
use std::collections::BTreeMap;

pub const WORKLOADS: [&str; 5] = ["noop", "life-setup", "life", "auth", "echo"];

/// How Python reaches the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mechanism {
    /// `pyo3`, `python`, `requests`, `httpx` or `grpcio`.
    pub client: String,
    /// The server it calls (over the wire only).
    pub server: Option<String>,
}

impl Mechanism {
    pub(crate) fn parse(text: &str) -> Result<Mechanism, String> {
        let (client, server) = match text.split_once('+') {
            Some((c, s)) => (c, Some(s.to_string())),
            None => (text, None),
        };
        let wire = matches!(client, "requests" | "requests-nosession" | "httpx" | "grpcio");
        if !wire && !matches!(client, "pyo3" | "python") {
            return Err(format!(
                "'{text}': unknown Python caller '{client}' (pyo3, python, requests+SERVER, requests-nosession+SERVER, \
                 httpx+SERVER, grpcio+SERVER)"
            ));
        }
        match (wire, &server) {
            (true, None) => Err(format!("'{text}': {client} needs a server: {client}+rust-axum, for example")),
            (true, Some(s)) if s.is_empty() || s.contains('+') => Err(format!("'{text}': bad server name '{s}'")),
            (false, Some(_)) => Err(format!("'{text}': {client} runs in-process and takes no server")),
            _ => Ok(Mechanism { client: client.to_string(), server }),
        }
    }

    pub fn transport(&self) -> &'static str {
        match self.client.as_str() {
            "pyo3" | "python" => "inproc",
            "grpcio" => "grpc",
            _ => "rest-h1",
        }
    }

    pub fn label(&self) -> String {
        match &self.server {
            Some(server) => format!("{}+{server}", self.client),
            None => self.client.clone(),
        }
    }

    /// Its results.json record (the server it calls has its own); `versions` as `python::versions` reads them.
    pub fn record(&self, versions: &BTreeMap<String, String>) -> ServerRecord {
        let (language, framework) = match self.client.as_str() {
            "pyo3" => ("Rust (from Python)", "the Rust workload through PyO3 bindings".to_string()),
            "python" => ("Python", "the same workload in pure Python".to_string()),
            "grpcio" => {
                ("Python", format!("gRPC with grpcio (one channel) to {}", self.server.as_deref().unwrap_or("")))
            }
            other => {
                ("Python", format!("REST/JSON with {other} (kept-alive) to {}", self.server.as_deref().unwrap_or("")))
            }
        };
        let library = match self.client.as_str() {
            "pyo3" => "pyo3",
            "python" => "",
            "grpcio" => "grpcio",
            "httpx" => "httpx",
            _ => "requests",
        };
        let mut versions: BTreeMap<String, String> = versions
            .iter()
            .filter(|(k, _)| ["python", "interpreter", library].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(server) = &self.server {
            versions.insert("server".into(), server.clone());
        }
        ServerRecord {
            name: self.label(),
            language: language.into(),
            framework,
            protocol: match self.transport() {
                "inproc" => "inproc",
                "grpc" => "grpc",
                _ => "rest",
            }
            .into(),
            versions,
            verify: None,
            failures: Vec::new(),
            note: String::new(),
            endpoint: None,
        }
    }
}

/// Calls per repetition when the suite sets none: seed 004's counts (setup ×1000, step
/// 10000/ntimes), auth and echo ×1000, the no-op ×2000 over the wire and ×200,000 in-process.
pub fn default_calls(workload: &str, ntimes: u32, transport: &str) -> u64 {
    match workload {
        "life" => (10_000 / u64::from(ntimes.max(1))).max(1),
        "noop" if transport == "inproc" => 200_000,
        "noop" => 2_000,
        _ => 1_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mechanisms_parse_and_say_what_is_wrong() {
        let m = Mechanism::parse("requests+rust-axum").unwrap();
        assert_eq!((m.client.as_str(), m.server.as_deref(), m.transport()), ("requests", Some("rust-axum"), "rest-h1"));
        assert_eq!(m.label(), "requests+rust-axum");
        assert_eq!(Mechanism::parse("pyo3").unwrap().transport(), "inproc");
        let versions = BTreeMap::from([("grpcio".to_string(), "1.2".to_string()), ("httpx".into(), "3".into())]);
        let record = Mechanism::parse("grpcio+rust-tonic").unwrap().record(&versions);
        assert_eq!(record.protocol, "grpc");
        assert_eq!(record.versions.keys().collect::<Vec<_>>(), ["grpcio", "server"]);
        for (text, says) in [
            ("curl+rust-axum", "unknown Python caller"),
            ("httpx", "needs a server"),
            ("pyo3+rust-axum", "takes no server"),
            ("grpcio+", "bad server name"),
        ] {
            let err = Mechanism::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn default_calls_follow_the_article() {
        assert_eq!(default_calls("life", 1, "rest-h1"), 10_000);
        assert_eq!(default_calls("life", 1000, "inproc"), 10);
        assert_eq!(default_calls("life-setup", 1, "grpc"), 1_000);
        assert_eq!(default_calls("noop", 1, "inproc"), 200_000);
    }
}
