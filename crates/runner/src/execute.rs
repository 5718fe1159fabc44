//! `callbench run`: the suite checked and its builds run before anything starts ([`prepare`]),
//! idle CPUs kept awake (idle_hold.rs) and the machine's steadiness probed, then every experiment
//! in order (experiment.rs), each ending with its table on stdout; results.json is complete once
//! the last one has run.

use crate::plan;
use crate::progress::Progress;
use crate::store::Store;
use crate::suite::{ExperimentKind, Suite};
use crate::RunError;
use callbench_launcher::manifest::{self, Protocol};
use callbench_launcher::program;
use callbench_launcher::repo::Repo;
use callbench_results::model::{Environment, Results, SuiteRecord, SCHEMA};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

pub use crate::options::Options;

/// Runs the suite into `store`; returns the results (complete unless interrupted).
/// Call [`prepare`] first.
pub async fn run(repo: &Repo, suite: &Suite, store: &Store, o: &Options) -> Result<Results, RunError> {
    let environment = crate::environment::record(repo, o.command_line.clone(), &o.client_cpus, &o.server_cpus);
    let mut results = new_results(suite, o, environment);
    // A suite that answers the question gets the seed articles' table beside its answer.
    // (Not for a user's endpoints or servers: the seeds' conditions are not theirs.)
    let users = !suite.endpoints.is_empty() || !suite.user_servers.is_empty();
    if !users && suite.experiments.iter().any(|e| e.answer.is_some()) {
        match crate::seed_table::read(&repo.root) {
            Ok(rows) => results.seeds = rows,
            Err(why) => eprintln!("callbench: no seed table: {why}"),
        }
    }
    // Held before the probe, so that its wake-up round trip is what the cells will meet.
    let (_awake, idle) = callbench_machine::idle_hold::take(o.allow_cpu_idle);
    let steadiness = callbench_machine::steadiness::probe_with(&o.client_cpus, &o.server_cpus, idle);
    for warning in &steadiness.warnings {
        eprintln!("callbench: steadiness: {warning}");
    }
    results.suite.interval_floor = suite.interval_floor.unwrap_or(steadiness.loop_spread);
    results.steadiness = Some(steadiness);
    store.write_results(&results)?;
    callbench_machine::pinning::pin_self(&o.client_cpus)?;
    let mut progress = Progress::new(suite, o.repetitions, o.quiet);
    for spec in &suite.experiments {
        if o.cancel.load(Ordering::Relaxed) {
            break;
        }
        progress.show(&format!("{}: starting its servers", spec.id), true);
        crate::experiment::run(repo, suite, spec, store, o, &mut results, &mut progress).await?;
        progress.end_line();
        print!("{}", crate::terminal::experiment_table(&results, &spec.id));
    }
    let own = |id: &str| suite.experiments.iter().find(|e| e.id == id).map_or(&[][..], |e| &e.thresholds[..]);
    crate::thresholds::judge(&mut results, own, &o.thresholds);
    results.interrupted = o.cancel.load(Ordering::Relaxed);
    results.complete = !results.interrupted;
    results.environment.finished_at = Some(crate::environment::utc_now());
    store.write_results(&results)?;
    Ok(results)
}

/// Results before the first experiment: nothing measured yet.
pub(crate) fn new_results(suite: &Suite, o: &Options, environment: Environment) -> Results {
    Results {
        schema: SCHEMA.into(),
        complete: false,
        interrupted: false,
        suite: SuiteRecord {
            name: suite.name.clone(),
            description: suite.description.clone(),
            file: o.suite_file.clone(),
            text: o.suite_text.clone(),
            repetitions: o.repetitions.unwrap_or(suite.repetitions),
            interval_floor: suite.interval_floor.unwrap_or(0.0),
        },
        environment,
        servers: Vec::new(),
        experiments: Vec::new(),
        cells: Vec::new(),
        comparisons: Vec::new(),
        steadiness: None,
        seeds: vec![],
    }
}

/// Before anything starts or is written: every server the suite names must exist, and the builds
/// they need are run (identical build commands once).
pub fn prepare(repo: &Repo, suite: &Suite, build: bool) -> Result<(), RunError> {
    // A suite's own servers first: their names are found before the repository's.
    let mut known = suite.user_manifests();
    known.extend(manifest::discover(repo).map_err(|e| RunError::Files(format!("{e:#}")))?);
    let programs = program::discover(repo).map_err(|e| RunError::Files(format!("{e:#}")))?;
    let mut builds: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut python_needed = false;
    for e in &suite.experiments {
        if e.kind == ExperimentKind::Processing {
            for name in &e.servers {
                let m = programs.iter().find(|m| &m.name == name).ok_or_else(|| {
                    let names: Vec<&str> = programs.iter().map(|m| m.name.as_str()).collect();
                    RunError::Settings(format!(
                        "experiment '{}': unknown program '{name}' (known: {})",
                        e.id,
                        names.join(", ")
                    ))
                })?;
                if let Some(argv) = m.build_argv(repo) {
                    builds.entry(argv).or_insert_with(|| m.name.clone());
                }
            }
            continue;
        }
        if e.kind == ExperimentKind::Python {
            python_needed = true;
        }
        // The seed articles' clients are built as servers are (a Node install, a Maven jar).
        for tool in e.clients.iter().filter_map(|c| callbench_peers::by_name(c).ok()) {
            if let Some(argv) = tool.build_command(&repo.root) {
                builds.entry(argv).or_insert_with(|| tool.name().to_string());
            }
        }
        for text in &e.servers {
            let (s, caller) = match e.kind {
                ExperimentKind::Python => {
                    let m = crate::mechanism::Mechanism::parse(text).map_err(RunError::Settings)?;
                    match m.server.clone() {
                        Some(name) => (plan::ServerSpec { name, http2: false, tls: false, http3: false }, Some(m)),
                        None => continue,
                    }
                }
                _ => (plan::ServerSpec::parse(text)?, None),
            };
            if s.is_inproc() || suite.endpoints.iter().any(|t| t.label == s.name) {
                continue;
            }
            let m = known.iter().find(|m| m.name == s.name).ok_or_else(|| {
                let names: Vec<&str> = known.iter().map(|m| m.name.as_str()).collect();
                RunError::Settings(format!(
                    "experiment '{}': unknown server '{}' (known: inproc, {})",
                    e.id,
                    s.name,
                    names.join(", ")
                ))
            })?;
            if caller.is_some() && m.protocol == Protocol::Raw {
                return Err(RunError::Settings(format!(
                    "experiment '{}': {} is a raw echo; Python callers call REST or gRPC",
                    e.id, m.name
                )));
            }
            if let Some(caller) = caller.filter(|c| (c.transport() == "grpc") != (m.protocol == Protocol::Grpc)) {
                return Err(RunError::Settings(format!(
                    "experiment '{}': {} calls {} servers; {} is {}",
                    e.id,
                    caller.client,
                    if caller.transport() == "grpc" { "gRPC" } else { "REST" },
                    m.name,
                    if m.protocol == Protocol::Grpc { "gRPC" } else { "REST" }
                )));
            }
            if s.http3 {
                m.http3().map_err(|why| RunError::Settings(format!("experiment '{}': '+h3': {why}", e.id)))?;
            }
            if s.http2 && m.protocol != Protocol::Rest {
                return Err(RunError::Settings(format!(
                    "experiment '{}': '+h2' is for REST servers; {} is {}",
                    e.id,
                    m.name,
                    match m.protocol {
                        Protocol::Raw => "a raw echo (no protocol)",
                        _ => "gRPC (always HTTP/2)",
                    }
                )));
            }
            if m.protocol == Protocol::Raw {
                check_raw(e, &m.name).map_err(RunError::Settings)?;
            }
            if let Some(argv) = m.build_argv(repo) {
                builds.entry(argv).or_insert_with(|| m.name.clone());
            }
        }
    }
    // Identical build commands (the Rust workspace) run once.
    for (argv, name) in builds.iter().filter(|_| build) {
        callbench_launcher::process::run_build(repo, name, argv).map_err(|e| RunError::Build(format!("{e:#}")))?;
    }
    if python_needed {
        crate::python_env::prepare(repo, build).map_err(RunError::Build)?;
    }
    Ok(())
}

/// A raw server (an echo) answers one workload, `echo` (its payload each way), to callbench's
/// own engine: what the cells of other workloads or tools would be called is not what they did.
fn check_raw(e: &crate::suite::ExperimentSpec, server: &str) -> Result<(), String> {
    if let Some(w) = e.workloads.iter().find(|w| w.as_str() != "echo") {
        return Err(format!(
            "experiment '{}': {server} echoes bytes: it takes the workload echo (payload_size bytes each way), not {w}",
            e.id
        ));
    }
    if let Some(c) = e.clients.iter().find(|c| c.as_str() != "callbench") {
        return Err(format!("experiment '{}': {server} is measured by callbench's raw:// target, not by {c}", e.id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_raw;
    use crate::suite::Suite;

    #[test]
    fn a_raw_server_takes_the_echo_workload_from_callbench_only() {
        let experiment = |extra: &str| {
            let text = format!("name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['raw-echo']\n{extra}");
            Suite::parse(&text).unwrap().experiments.remove(0)
        };
        assert_eq!(check_raw(&experiment("workloads=['echo']"), "raw-echo"), Ok(()));
        let students = check_raw(&experiment("workloads=['echo','students']"), "raw-echo").unwrap_err();
        assert!(students.contains("not students"), "{students}");
        let wrk = check_raw(&experiment("workloads=['echo']\nclients=['callbench','wrk']\nduration='1s'"), "raw-echo");
        assert!(wrk.unwrap_err().contains("not by wrk"));
    }
}
