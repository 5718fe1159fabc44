//! The servers of one experiment: started from their manifests, pinned to the server CPUs, told
//! how many cores they have, verified before anything is measured, watched for crashes (a crashed
//! server is recorded and restarted for the next cell), and stopped at the end — or on Ctrl-C,
//! or with callbench itself (PR_SET_PDEATHSIG).

use callbench_launcher::manifest::{self, Manifest, Protocol};
use callbench_launcher::process::{ServerProcess, StartOptions};
use callbench_launcher::repo::Repo;
use callbench_link::{Link, SERVER_ADDR};
use callbench_results::model::{ServerRecord, VerifyRecord};
use callbench_verify::{probe, run_vectors};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The servers a run has verified, each by everything it was started with: a later experiment that
/// starts the same binary the same way only waits for it to answer. Verification makes the same
/// calls each time (a REST server's include a 64 MiB upload, sent twice), and the report's counts
/// are those of the distinct starts, not of every experiment.
#[derive(Default)]
pub struct Verified(Mutex<BTreeSet<String>>);

impl Verified {
    fn contains(&self, key: &str) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).contains(key)
    }
    fn insert(&self, key: String) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
    }
}

/// A running, verified server.
pub struct Running {
    pub process: ServerProcess,
    pub protocol: Protocol,
    /// The file where it counts the calls it answers (servers that keep no count never make it).
    answered_file: PathBuf,
}

impl Running {
    /// The calls it has answered so far, by its own count (None: it keeps none).
    pub fn answered(&self) -> Option<u64> {
        callbench_serverkit::answered::read(&self.answered_file)
    }

    pub fn addr(&self) -> SocketAddr {
        self.process.addr
    }
    /// The server's process group (its pid: it leads its own group).
    pub fn group(&self) -> i32 {
        self.process.pid() as i32
    }
}

pub struct Fleet<'a> {
    repo: &'a Repo,
    cpus: Vec<usize>,
    /// The emulated link the servers sit behind (in its server namespace, at its far address).
    link: Option<&'a Link>,
    /// The address servers listen on (None: loopback; a cluster's `server_host`).
    host: Option<String>,
    /// Keyed by (server name, mode, TLS).
    running: BTreeMap<(String, String, bool), Running>,
    /// Servers that cannot be measured in this run (failed start or verify), with the reason.
    refused: BTreeMap<(String, String, bool), String>,
    /// More environment for every server it starts.
    env: Vec<(String, String)>,
    /// A suite's own servers (`[[server]]` with a start command), found before `servers/`.
    user: Vec<Manifest>,
    /// The run's servers verified so far (None: every start is verified).
    verified: Option<&'a Verified>,
}

impl<'a> Fleet<'a> {
    pub fn repo(&self) -> &'a Repo {
        self.repo
    }

    pub fn new(repo: &'a Repo, cpus: Vec<usize>) -> Self {
        Fleet {
            repo,
            cpus,
            link: None,
            host: None,
            running: BTreeMap::new(),
            refused: BTreeMap::new(),
            env: Vec::new(),
            user: Vec::new(),
            verified: None,
        }
    }

    /// A server started as one of `verified` was is not verified again; one verified now joins it.
    pub fn remembering(mut self, verified: &'a Verified) -> Self {
        self.verified = Some(verified);
        self
    }

    /// A suite's own servers, started by their commands as built-in ones are.
    pub fn with_user_servers(mut self, user: Vec<Manifest>) -> Self {
        self.user = user;
        self
    }

    /// Servers started from now on get `env` too.
    pub fn with_env(mut self, env: Vec<(String, String)>) -> Self {
        self.env = env;
        self
    }

    /// Servers started from now on listen on `host` (None: loopback).
    pub fn listening_on(mut self, host: Option<String>) -> Self {
        self.host = host;
        self
    }

    /// Servers started from now on sit behind `link`; the caller runs on its client side.
    pub fn behind(mut self, link: Option<&'a Link>) -> Self {
        self.link = link;
        self
    }

    pub fn link(&self) -> Option<&'a Link> {
        self.link
    }

    /// The running server for (name, mode): started and verified now if needed. Errors say why it
    /// cannot be measured; they are recorded in `records` too.
    pub(crate) async fn ensure(
        &mut self,
        name: &str,
        mode: &str,
        tls: bool,
        records: &mut Vec<ServerRecord>,
    ) -> Result<&Running, String> {
        let key = (name.to_string(), mode.to_string(), tls);
        if let Some(reason) = self.refused.get(&key) {
            return Err(reason.clone());
        }
        if let Some(running) = self.running.get_mut(&key) {
            if let Some(status) = running.process.exited() {
                let message = format!("{name} ({mode}) had exited ({status}) before this cell; restarted");
                record(records, name, |r| r.failures.push(message.clone()));
                self.running.remove(&key);
                let _ = std::fs::remove_file(answered_file(name, mode, tls));
            }
        }
        if !self.running.contains_key(&key) {
            match self.start(name, mode, tls, records).await {
                Ok(running) => {
                    self.running.insert(key.clone(), running);
                }
                Err(reason) => {
                    let _ = std::fs::remove_file(answered_file(name, mode, tls));
                    record(records, name, |r| r.failures.push(reason.clone()));
                    self.refused.insert(key, reason.clone());
                    return Err(reason);
                }
            }
        }
        Ok(&self.running[&key])
    }

    async fn start(
        &self,
        name: &str,
        mode: &str,
        tls: bool,
        records: &mut Vec<ServerRecord>,
    ) -> Result<Running, String> {
        let manifest = match self.user.iter().find(|m| m.name == name) {
            Some(m) => m.clone(),
            None => manifest::find(self.repo, name).map_err(|e| format!("{e:#}"))?,
        };
        if tls {
            manifest.tls_args()?;
        }
        if !records.iter().any(|r| r.name == name) {
            records.push(server_record(self.repo, &manifest));
        }
        let answered_file = answered_file(name, mode, tls);
        let _ = std::fs::remove_file(&answered_file);
        let mut options = StartOptions {
            workers: self.cpus.len().max(1),
            mode: mode.to_string(),
            cpus: (!self.cpus.is_empty()).then(|| self.cpus.clone()),
            tls,
            env: [(callbench_serverkit::answered::ENV.to_string(), answered_file.display().to_string())]
                .into_iter()
                .chain(self.env.iter().cloned())
                .collect(),
            ..StartOptions::default()
        };
        if let Some(host) = &self.host {
            options.host = host.clone();
        }
        if let Some(link) = self.link {
            options.host = SERVER_ADDR.to_string();
            options.netns = Some(link.server.fd());
        }
        let mut process = ServerProcess::start(self.repo, &manifest, &options).map_err(|e| format!("{e:#}"))?;
        // The port may have served the other kind before, in this run.
        match tls {
            true => callbench_verify::dial::speaks_tls(process.addr),
            false => callbench_verify::dial::plain(process.addr),
        }
        if manifest.calls_only {
            // A user's server of its own API: no vectors to hold it to; each cell's calls are checked by status.
            probe::wait_accepting(&mut process, Duration::from_secs(60))
                .await
                .map_err(|e| format!("{name} did not start: {}", one_line(&format!("{e:#}"))))?;
            return Ok(Running { process, protocol: manifest.protocol, answered_file });
        }
        probe::wait_ready(&mut process, manifest.protocol, Duration::from_secs(60))
            .await
            .map_err(|e| format!("{name} did not start: {}", one_line(&format!("{e:#}"))))?;
        let started_as = self.started_as(&manifest, &options);
        if self.verified.is_some_and(|v| v.contains(&started_as)) {
            return Ok(Running { process, protocol: manifest.protocol, answered_file });
        }
        let mut outcomes = run_vectors(manifest.protocol, process.addr, None).await;
        // The same vectors through the client that will measure it.
        outcomes.extend(callbench_verify::run_vectors_through_engine(manifest.protocol, process.addr).await.0);
        outcomes.extend(callbench_verify::gzip::check_gzip(manifest.protocol, process.addr).await);
        callbench_verify::apply_deviations(&manifest, &mut outcomes);
        let deviations: Vec<String> =
            outcomes.iter().filter(|o| o.class == "deviation").map(|o| o.name.clone()).collect();
        let failures: Vec<String> = outcomes
            .iter()
            .filter_map(|o| o.failure.as_ref().map(|f| format!("{} ({mode}): {}", o.name, one_line(f))))
            .collect();
        let verify = VerifyRecord {
            passed: outcomes.len() - failures.len() - deviations.len(),
            failed: failures.len(),
            failures,
            deviations,
        };
        let failed = verify.failed;
        record(records, name, |r| match &mut r.verify {
            // Several modes: the counts add up, the failures too.
            Some(v) => {
                v.passed += verify.passed;
                v.failed += verify.failed;
                v.failures.extend(verify.failures.iter().cloned());
            }
            None => r.verify = Some(verify.clone()),
        });
        if failed > 0 {
            return Err(format!("{name} failed verify ({failed} vectors) in mode {mode}: not measured"));
        }
        if let Some(verified) = self.verified {
            verified.insert(started_as);
        }
        Ok(Running { process, protocol: manifest.protocol, answered_file })
    }

    /// Everything a server's answers may depend on: its manifest's command, how it was started
    /// (mode, TLS, workers, CPUs, address, environment) and whether it sits behind a link. The
    /// answers-file path, which differs per start, is left out.
    fn started_as(&self, manifest: &Manifest, options: &StartOptions) -> String {
        let env: Vec<_> = options.env.iter().filter(|(k, _)| k != callbench_serverkit::answered::ENV).collect();
        format!(
            "{:?} {:?} {:?} mode={} tls={} workers={} cpus={:?} host={} link={} cgroup={:?} env={env:?}",
            manifest.dir,
            manifest.start,
            manifest.tls,
            options.mode,
            options.tls,
            options.workers,
            options.cpus,
            options.host,
            self.link.is_some(),
            options.cgroup,
        )
    }

    /// Checks that (name, mode) is still alive; if not, records the crash and says so.
    pub fn check_alive(&mut self, name: &str, mode: &str, tls: bool, records: &mut [ServerRecord]) -> Option<String> {
        let key = (name.to_string(), mode.to_string(), tls);
        let running = self.running.get_mut(&key)?;
        let status = running.process.exited()?;
        let tail = running.process.output_tail();
        let message = format!("{name} ({mode}) died ({status}); last output: {}", one_line(&tail));
        record(records, name, |r| r.failures.push(message.clone()));
        self.running.remove(&key);
        let _ = std::fs::remove_file(answered_file(name, mode, tls));
        Some(message)
    }

    /// Stops every server of the fleet (SIGTERM, then SIGKILL after 5 s).
    pub fn stop_all(&mut self) {
        for (_, mut running) in std::mem::take(&mut self.running) {
            running.process.stop(Duration::from_secs(5));
            let _ = std::fs::remove_file(&running.answered_file);
        }
    }
}

impl Drop for Fleet<'_> {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Where a server started by this process keeps its count of answers: in memory (/dev/shm) where
/// there is one, one file per server, mode and TLS.
fn answered_file(name: &str, mode: &str, tls: bool) -> PathBuf {
    let dir = Path::new("/dev/shm");
    let dir = if dir.is_dir() { dir.to_path_buf() } else { std::env::temp_dir() };
    dir.join(format!("callbench-{}-answered-{name}-{mode}{}", std::process::id(), if tls { "-tls" } else { "" }))
}

fn record(records: &mut [ServerRecord], name: &str, change: impl FnOnce(&mut ServerRecord)) {
    if let Some(r) = records.iter_mut().find(|r| r.name == name) {
        change(r);
    }
}

/// What results.json says about a server before it runs.
pub fn server_record(repo: &Repo, m: &Manifest) -> ServerRecord {
    ServerRecord {
        name: m.name.clone(),
        language: m.language.clone(),
        framework: m.framework.clone(),
        protocol: m.protocol.to_string(),
        versions: callbench_launcher::versions::server_versions(repo, m),
        verify: None,
        failures: Vec::new(),
        note: m.note.clone(),
        endpoint: None,
    }
}

/// A processing program's record (seed 000's work in one language, run as a process).
pub fn program_record(repo: &Repo, m: &callbench_launcher::program::ProgramManifest) -> ServerRecord {
    ServerRecord {
        name: m.name.clone(),
        language: m.language.clone(),
        framework: m.description.clone(),
        protocol: "process".into(),
        versions: callbench_launcher::versions::program_versions(repo, m),
        verify: None,
        failures: Vec::new(),
        note: String::new(),
        endpoint: None,
    }
}

/// The in-process baseline's record: the workloads compiled into callbench.
pub fn inproc_record() -> ServerRecord {
    let mut versions = BTreeMap::new();
    versions.insert("callbench".into(), env!("CARGO_PKG_VERSION").into());
    ServerRecord {
        name: "inproc".into(),
        language: "rust".into(),
        framework: "none (function call)".into(),
        protocol: "inproc".into(),
        versions,
        verify: None,
        failures: Vec::new(),
        note: String::new(),
        endpoint: None,
    }
}

pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
