//! What a suite does with its own servers and calls (suite/user.rs): finds them by name, sets the
//! folder their files are found from, turns them into manifests and endpoints, and checks them
//! and the experiments that use them.

use super::user::{CallError, CallSpec, UserServer};
use super::Suite;
use callbench_launcher::manifest::{Manifest, Protocol};
use std::collections::BTreeMap;
use std::path::Path;

impl Suite {
    /// The user's server called `name`, if the suite has one.
    pub fn user_server(&self, name: &str) -> Option<&UserServer> {
        self.user_servers.iter().find(|s| s.name == name)
    }

    /// The suite's call called `name`, if it has one.
    pub fn call(&self, name: &str) -> Option<&CallSpec> {
        self.calls.iter().find(|c| c.name == name)
    }

    /// Sets the folder the suite file is in: its servers start there, its calls' files are found there.
    pub fn in_folder(mut self, folder: &Path) -> Suite {
        self.folder = folder.to_path_buf();
        self.calls.iter_mut().for_each(|c| c.in_folder(folder));
        self
    }

    /// An endpoint for each call made to each of its servers at a URL (not probed yet). Outside
    /// loopback only with `allow_remote`.
    pub fn user_endpoints(&self, allow_remote: bool) -> Result<Vec<crate::endpoint::Endpoint>, CallError> {
        let mut out: Vec<crate::endpoint::Endpoint> = Vec::new();
        for e in &self.experiments {
            for s in e.servers.iter().filter_map(|s| self.user_server(server_name(s))) {
                let Some(url) = &s.url else { continue };
                for call in e.workloads.iter().filter_map(|w| self.call(w)) {
                    if out.iter().any(|t| t.label == s.name && t.workload == call.name) {
                        continue;
                    }
                    let mut spec = call.spec(url, s.protocol)?;
                    spec.allow_remote = allow_remote;
                    let mut endpoint = crate::endpoint::Endpoint::new(s.name.clone(), spec, s.pids.clone());
                    endpoint.workload = call.name.clone();
                    if !allow_remote && !endpoint.on_loopback() {
                        return Err(CallError::NotLoopback { server: s.name.clone(), url: url.clone() });
                    }
                    out.push(endpoint);
                }
            }
        }
        Ok(out)
    }

    /// The user's servers' manifests (those it starts).
    pub fn user_manifests(&self) -> Vec<Manifest> {
        self.user_servers.iter().filter(|s| s.started()).map(|s| s.manifest(&self.folder)).collect()
    }

    /// The `[[server]]` and `[[call]]` tables and the experiments that use them: one line per mistake.
    pub(super) fn check_user(&self) -> Result<(), String> {
        let mut names = BTreeMap::new();
        for s in &self.user_servers {
            if s.name.is_empty() || !s.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
                return Err(format!("server name '{}' must be letters, digits, '-', '_' or '.'", s.name));
            }
            if s.name == "inproc" || names.insert(s.name.as_str(), ()).is_some() {
                return Err(format!("two servers are called '{}'", s.name));
            }
            match (&s.url, s.start.is_empty()) {
                (Some(_), false) => return Err(format!("server '{}': give start or url, not both", s.name)),
                (None, true) => return Err(format!("server '{}' needs start = [...] or url = \"...\"", s.name)),
                (Some(url), true) => check_url(s, url)?,
                (None, false) => {}
            }
            if s.url.is_none() && !s.pids.is_empty() {
                return Err(format!("server '{}': pids are for a server at a url (a started one is measured)", s.name));
            }
            if s.url.is_some() && (s.tls.is_some() || !s.env.is_empty()) {
                return Err(format!("server '{}': tls and env are for a started server; its url says TLS", s.name));
            }
            if s.protocol == Protocol::Raw {
                return Err(format!("server '{}': protocol must be rest or grpc", s.name));
            }
        }
        let mut calls = BTreeMap::new();
        for c in &self.calls {
            if c.name.is_empty() || !c.name.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch)) {
                return Err(format!("call name '{}' must be letters, digits, '-', '_' or '.'", c.name));
            }
            if calls.insert(c.name.as_str(), ()).is_some() {
                return Err(format!("two calls are called '{}'", c.name));
            }
            if c.rest.is_none() && c.grpc.is_none() {
                return Err(format!("call '{}' needs rest = {{ … }}, grpc = {{ … }} or both", c.name));
            }
            for protocol in [Protocol::Rest, Protocol::Grpc] {
                if c.rest.is_some() && protocol == Protocol::Rest || c.grpc.is_some() && protocol == Protocol::Grpc {
                    c.spec("http://127.0.0.1:1", protocol).map_err(|e| e.to_string())?;
                }
            }
        }
        for e in &self.experiments {
            for w in e.workloads.iter().filter_map(|w| self.call(w)) {
                for s in e.servers.iter().filter_map(|s| self.user_server(server_name(s))) {
                    if (s.protocol == Protocol::Rest && w.rest.is_none())
                        || (s.protocol == Protocol::Grpc && w.grpc.is_none())
                    {
                        return Err(format!(
                            "experiment '{}': call '{}' has no {} part for server '{}'",
                            e.id, w.name, s.protocol, s.name
                        ));
                    }
                }
            }
            for text in e.servers.iter().filter(|s| s.contains('+')) {
                if let Some(s) = self.user_server(server_name(text)).filter(|s| s.url.is_some()) {
                    return Err(format!(
                        "experiment '{}': '{text}': server '{}' runs at its url, which says its protocol and TLS",
                        e.id, s.name
                    ));
                }
            }
            for s in e.servers.iter().filter_map(|s| self.user_server(server_name(s))) {
                if let Some(w) = e.workloads.iter().find(|w| self.call(w).is_none() && !s.contract) {
                    return Err(format!(
                        "experiment '{}': '{w}' is no [[call]] of the suite, and server '{}' does not implement \
                         callbench's contract (contract = true) for its workloads",
                        e.id, s.name
                    ));
                }
                if e.kind != super::ExperimentKind::Load || !e.clients.iter().all(|c| c == "callbench") {
                    return Err(format!(
                        "experiment '{}': server '{}' is called by callbench's engine only (no other clients, kinds)",
                        e.id, s.name
                    ));
                }
                if s.url.is_some() && e.load.network.is_some() {
                    return Err(format!(
                        "experiment '{}': server '{}' runs at its url: callbench cannot put it behind a link (give \
                         it a start command)",
                        e.id, s.name
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The server an experiment's `servers` entry names (`orders-rest+tls` names `orders-rest`).
fn server_name(text: &str) -> &str {
    text.split('+').next().unwrap_or(text)
}

fn check_url(s: &UserServer, url: &str) -> Result<(), String> {
    let grpc = url.starts_with("grpc://") || url.starts_with("grpcs://");
    let http = url.starts_with("http://") || url.starts_with("https://");
    match s.protocol {
        Protocol::Grpc if !grpc => Err(format!("server '{}': a gRPC server's url is grpc(s)://HOST:PORT", s.name)),
        Protocol::Rest if !http => Err(format!("server '{}': a REST server's url is http(s)://HOST:PORT", s.name)),
        _ => callbench_load::parse::target(url).map(|_| ()).map_err(|why| format!("server '{}': {why}", s.name)),
    }
}

#[cfg(test)]
mod tests;
