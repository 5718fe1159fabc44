//! One repetition of a cell, whoever makes its calls: [`measure`] is the one way in for every
//! kind of client — the load engine in this process (engine.rs), the engines of a Ray cluster
//! (cluster.rs), another load tool (peer.rs), a Python caller (python.rs) or a processing program
//! timing itself (program.rs). Around each: the server checked alive before and after (a server
//! that died is its own error, and the cell ends there, as all its runs must come from one server
//! process), the emulated link's use counted, and what else used the pinned CPUs judged.

mod cluster;
pub mod engine;
mod outcome;
pub mod peer;
mod program;
mod python;

pub use outcome::{CellError, Measured};

use crate::cell::PlannedCell;
use crate::endpoint::Endpoint;
use crate::fleet::Fleet;
use crate::mechanism::Mechanism;
use crate::options::Options;
use crate::plan::{CellKind, CellPlan};
use callbench_launcher::manifest::Protocol;
use callbench_launcher::program::ProgramManifest;
use callbench_launcher::repo::Repo;
use callbench_link::LinkSpec;
use callbench_machine::interference::{self, Sides};
use callbench_results::model::Results;
use std::path::{Path, PathBuf};

/// What the repetitions of one experiment share: the servers it runs (and its link), the run's
/// options, and what each kind of client needs besides.
pub struct Rig<'a> {
    pub repo: &'a Repo,
    pub o: &'a Options,
    pub fleet: Fleet<'a>,
    /// Processing experiments: the programs of `processing/`.
    pub programs: Vec<ProgramManifest>,
    /// Python experiments: the interpreter that runs the callers.
    pub python: PathBuf,
    /// The results folder: peer tools' files and output go under it.
    pub results_dir: PathBuf,
    /// The time left for measuring repetitions again.
    pub again: crate::again_budget::AgainBudget,
}

/// One repetition of `c`, by its kind of client.
pub async fn measure(rig: &mut Rig<'_>, c: &PlannedCell, results: &mut Results) -> Result<Measured, CellError> {
    let p = &c.plan;
    match &p.kind {
        CellKind::Processing => match rig.programs.iter().find(|m| m.name == p.server.name) {
            Some(program) => by_program(rig.repo, program, p, rig.o).await,
            None => Err(CellError::Failed(format!("no program '{}' in processing/", p.server.name))),
        },
        CellKind::Python(m) => by_python(rig.repo, &rig.python, p, m, &mut rig.fleet, results, rig.o).await,
        CellKind::Load => by_engine(p, c.rate, &mut rig.fleet, results, rig.o).await,
        CellKind::Peer(tool) => {
            let tool = callbench_peers::by_name(tool).map_err(String::from)?;
            let dir = rig.results_dir.join("peers").join(crate::store::file_safe(&p.id));
            peer::measure(p, tool, c.rate, &mut rig.fleet, results, rig.o, dir).await
        }
    }
}

/// One repetition of a load cell by the engine (or a cluster's engines), with the server's crash
/// (if any) turned into the error.
async fn by_engine(
    p: &CellPlan,
    rate: Option<f64>,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<Measured, CellError> {
    if let Some(endpoint) = &p.endpoint {
        let python = p.cluster.as_ref().map(|_| crate::python_env::interpreter(fleet.repo()));
        return by_endpoint(p, endpoint, rate, python, o).await;
    }
    let (addr, group, protocol) = if p.server.is_inproc() {
        (None, None, Protocol::Rest)
    } else {
        // A server that died since the cell's last repetition ends the cell (the next cell
        // restarts it): the cell's runs must all come from one process.
        if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), p.server.tls, &mut results.servers) {
            return Err(CellError::ServerDied(crash));
        }
        let running = fleet.ensure(&p.server.name, &p.mode(), p.server.tls, &mut results.servers).await?;
        (Some(running.addr()), Some(running.group()), running.protocol)
    };
    let mut spec = p.load_spec(addr, protocol, rate)?;
    if addr.is_none() {
        spec.users_file = Some(fleet.repo().users_file().map_err(|e| format!("{e:#}"))?);
    }
    let server_cpus: &[usize] = if p.server.is_inproc() { &[] } else { &o.server_cpus };
    let sides = Sides { client: &o.client_cpus, server: server_cpus };
    let link = fleet.link().filter(|_| !p.server.is_inproc());
    let counters = link.map(|l| l.client_counters());
    let emulated = link.filter(|l| l.is_emulated());
    let before = emulated
        .map(|l| crate::network::before_run(l, &p.fields.network.clone().unwrap_or_else(LinkSpec::transparent)));
    let mut outcome = match &p.cluster {
        Some(cluster) => {
            // `callbench run --allow-remote` let this experiment's servers listen where the workers reach them.
            spec.allow_remote = cluster.remote_server_host().is_some() && o.allow_remote;
            let python = crate::python_env::interpreter(fleet.repo());
            let pids = group.map(callbench_machine::process_group::group_pids).unwrap_or_default();
            cluster::measure(&python, &spec, cluster, &pids, o.cancel.clone()).await
        }
        None => engine::run(&spec, group, Some(&sides), counters, o.cancel.clone()).await,
    };
    if let (Some(link), Some(before), Ok(m)) = (emulated, before, outcome.as_mut()) {
        m.metrics.link = Some(crate::network::use_since(link, &before));
    }
    if !p.server.is_inproc() {
        if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), p.server.tls, &mut results.servers) {
            return Err(CellError::ServerDied(crash));
        }
    }
    Ok(outcome?)
}

/// One repetition of a user's endpoint's cell: its CPU read from the pids the user gave (with their
/// process groups), which must still run before and after. Its calls are made by this process's
/// engine, or by the workers of the experiment's Ray cluster (`python` runs its coordinator).
async fn by_endpoint(
    p: &CellPlan,
    endpoint: &Endpoint,
    rate: Option<f64>,
    python: Option<PathBuf>,
    o: &Options,
) -> Result<Measured, CellError> {
    let gone =
        |pid: i32| CellError::ServerDied(format!("process {pid} (--server-pid of {}) has exited", endpoint.label));
    if let Some(pid) = endpoint.gone() {
        return Err(gone(pid));
    }
    let spec = p.endpoint_spec(rate)?;
    let outcome = match (&p.cluster, python) {
        (Some(cluster), Some(python)) => {
            cluster::measure(&python, &spec, cluster, &endpoint.pids(), o.cancel.clone()).await
        }
        _ => {
            let sides = Sides { client: &o.client_cpus, server: &o.server_cpus };
            engine::run_with_pids(&spec, endpoint.pids(), Some(&sides), None, o.cancel.clone()).await
        }
    };
    if let Some(pid) = endpoint.gone() {
        return Err(gone(pid));
    }
    Ok(outcome?)
}

/// One repetition of a processing cell: one process of the program, on the server CPUs.
async fn by_program(repo: &Repo, program: &ProgramManifest, p: &CellPlan, o: &Options) -> Result<Measured, CellError> {
    // The program runs on the server CPUs and is this process's child: its time is "ours" there.
    let sides = Sides { client: &o.server_cpus, server: &[] };
    let before = interference::snapshot(&[]);
    let outcome = program::measure(repo, program, p, &o.server_cpus, o.cancel.clone()).await;
    Ok(judged(outcome, &before, &[], &sides)?)
}

/// One repetition of a Python cell: one run of the Python caller, on the client CPUs.
async fn by_python(
    repo: &Repo,
    python: &Path,
    p: &CellPlan,
    m: &Mechanism,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<Measured, CellError> {
    let Some(server) = &m.server else {
        let sides = Sides { client: &o.client_cpus, server: &[] };
        let before = interference::snapshot(&[]);
        let outcome = python::measure(repo, python, p, m, None, &o.client_cpus, o.cancel.clone()).await;
        return Ok(judged(outcome, &before, &[], &sides)?);
    };
    if let Some(crash) = fleet.check_alive(server, &p.mode(), false, &mut results.servers) {
        return Err(CellError::ServerDied(crash));
    }
    let running = fleet.ensure(server, &p.mode(), false, &mut results.servers).await?;
    let wire = python::Wire { addr: running.addr(), pid: running.group() };
    let pids = callbench_machine::process_group::group_pids(running.group());
    let sides = Sides { client: &o.client_cpus, server: &o.server_cpus };
    let before = interference::snapshot(&pids);
    let outcome = python::measure(repo, python, p, m, Some(wire), &o.client_cpus, o.cancel.clone()).await;
    let outcome = judged(outcome, &before, &pids, &sides);
    if let Some(crash) = fleet.check_alive(server, &p.mode(), false, &mut results.servers) {
        return Err(CellError::ServerDied(crash));
    }
    Ok(outcome?)
}

/// `outcome` with the interference between `before` and now recorded and judged (for cells
/// measured as a process of their own, without the engine's window edges).
fn judged(
    outcome: Result<Measured, String>,
    before: &interference::Snapshot,
    server_pids: &[i32],
    sides: &Sides,
) -> Result<Measured, String> {
    let after = interference::snapshot(server_pids);
    outcome.map(|mut m| {
        let calls = m.metrics.calls_ok + m.metrics.calls_errors;
        m.metrics.interference = interference::between(before, &after, sides, calls);
        m.metrics.disturbed = m.metrics.interference.as_ref().and_then(interference::disturbed);
        m
    })
}
