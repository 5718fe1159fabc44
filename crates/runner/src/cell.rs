//! One repetition of one cell — through the load engine, a processing program or a Python caller —
//! and the cell's summary after it. A server that died around a repetition is its own error: the
//! cell ends there, as all its runs must come from one server process.

use crate::fleet::Fleet;
use crate::interference::{self, Sides};
use crate::mechanism::Mechanism;
use crate::options::Options;
use crate::plan::CellPlan;
use crate::repetition::{self, Measured};
use crate::store::Store;
use callbench_link::LinkSpec;
use callbench_report::analysis;
use callbench_report::model::{Cell, CellStatus, Results};
use callbench_servers::manifest::Protocol;
use callbench_servers::program::ProgramManifest;
use callbench_servers::repo::Repo;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// A cell of the experiment being run: its plan, its place in `results.cells`, its resolved rate.
pub struct PlannedCell {
    pub plan: CellPlan,
    pub index: usize,
    /// Calls/s for an open-loop cell (`rate = "50% of closed-50"` resolved).
    pub rate: Option<f64>,
}

/// Why a repetition gave no measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellError {
    /// The server died before or during the repetition (its exit status or signal).
    ServerDied(String),
    /// Anything else: a load that could not start, a program or caller that failed.
    Failed(String),
}

impl CellError {
    /// The status the cell is left in.
    pub fn status(&self) -> CellStatus {
        match self {
            CellError::ServerDied(_) => CellStatus::ServerCrashed,
            CellError::Failed(_) => CellStatus::Error,
        }
    }
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CellError::ServerDied(crash) => write!(f, "server died: {crash}"),
            CellError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<String> for CellError {
    fn from(why: String) -> Self {
        CellError::Failed(why)
    }
}

/// One repetition of a load cell, with the server's crash (if any) turned into the error.
pub async fn measure_once(
    p: &CellPlan,
    rate: Option<f64>,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<Measured, CellError> {
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
            let python = crate::python::interpreter(fleet.repo());
            crate::cluster::measure(&python, &spec, cluster, group, o.cancel.clone()).await
        }
        None => repetition::run(&spec, group, Some(&sides), counters, o.cancel.clone()).await,
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

/// One repetition of a processing cell: one process of the program, on the server CPUs.
pub async fn measure_program(
    repo: &Repo,
    program: &ProgramManifest,
    p: &CellPlan,
    o: &Options,
) -> Result<Measured, CellError> {
    // The program runs on the server CPUs and is this process's child: its time is "ours" there.
    let sides = Sides { client: &o.server_cpus, server: &[] };
    let before = interference::snapshot(&[]);
    let outcome = crate::processing::measure(repo, program, p, &o.server_cpus, o.cancel.clone()).await;
    Ok(judged(outcome, &before, &[], &sides)?)
}

/// One repetition of a Python cell: one run of the Python caller, on the client CPUs.
pub async fn measure_python(
    repo: &Repo,
    python: &std::path::Path,
    p: &CellPlan,
    m: &Mechanism,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<Measured, CellError> {
    let Some(server) = &m.server else {
        let sides = Sides { client: &o.client_cpus, server: &[] };
        let before = interference::snapshot(&[]);
        let outcome = crate::python::measure(repo, python, p, m, None, &o.client_cpus, o.cancel.clone()).await;
        return Ok(judged(outcome, &before, &[], &sides)?);
    };
    if let Some(crash) = fleet.check_alive(server, &p.mode(), false, &mut results.servers) {
        return Err(CellError::ServerDied(crash));
    }
    let running = fleet.ensure(server, &p.mode(), false, &mut results.servers).await?;
    let wire = crate::python::Wire { addr: running.addr(), pid: running.group() };
    let pids = crate::measure::group_pids(running.group());
    let sides = Sides { client: &o.client_cpus, server: &o.server_cpus };
    let before = interference::snapshot(&pids);
    let outcome = crate::python::measure(repo, python, p, m, Some(wire), &o.client_cpus, o.cancel.clone()).await;
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

/// A cell before its first repetition.
pub fn new_cell(p: &CellPlan, rate: Option<f64>) -> Cell {
    let transport = if p.server.is_inproc() {
        "inproc".to_string()
    } else if p.server.http2 {
        "rest-h2".to_string()
    } else {
        String::new() // filled when the server's protocol is known
    };
    Cell {
        id: p.id.clone(),
        experiment: p.experiment.clone(),
        server: p.label(),
        workload: p.workload.clone(),
        transport,
        params: p.params(rate),
        // Latency against offered load: a swept rate is the x axis as resolved ("50% of ...").
        x: if p.sweep.as_deref() == Some("rate") { rate } else { p.x },
        status: CellStatus::Ok,
        error: None,
        runs: Vec::new(),
        summary: BTreeMap::new(),
        spectrum: Vec::new(),
        bottleneck: String::new(),
        noisy: false,
        disturbed: None,
        reruns: 0,
        hdr_file: None,
        network: None,
    }
}

/// Summary, spectrum and raw histograms of a cell after a repetition.
pub fn finish_cell(
    results: &mut Results,
    index: usize,
    hists: &[(Histogram<u64>, Duration)],
    store: &Store,
    o: &Options,
) {
    let transport = results.cells[index].transport.clone();
    let server_cpus = if transport == "inproc" { 0 } else { o.server_cpus.len() };
    let headline = results.experiment(&results.cells[index].experiment).map(|e| e.headline.clone()).unwrap_or_default();
    let floor = results.suite.interval_floor;
    let cell = &mut results.cells[index];
    analysis::summarise(cell, &headline, floor, o.client_cpus.len(), server_cpus);
    cell.disturbed = crate::interference::disturbed_note(&cell.runs);
    if transport == "process" {
        cell.bottleneck = "-".into(); // one process timing its own work: no client, no server
    }
    if let Some((first, _)) = hists.first() {
        let mut merged = first.clone();
        for (h, _) in &hists[1..] {
            let _ = merged.add(h);
        }
        cell.spectrum = spectrum(&merged);
        match store.write_hdr(&cell.id, hists) {
            Ok(path) => cell.hdr_file = Some(path),
            Err(e) => eprintln!("callbench: {e}"),
        }
    }
}

/// The percentiles the log-scale spectrum chart plots.
fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return vec![];
    }
    [0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0]
        .iter()
        .map(|&p| (p, h.value_at_quantile(p / 100.0) as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_server_is_a_crash_and_anything_else_an_error() {
        let died = CellError::ServerDied("killed by signal 9".into());
        assert_eq!(
            (died.status(), died.to_string().as_str()),
            (CellStatus::ServerCrashed, "server died: killed by signal 9")
        );
        let failed = CellError::from("cannot connect".to_string());
        assert_eq!((failed.status(), failed.to_string().as_str()), (CellStatus::Error, "cannot connect"));
    }

    #[test]
    fn the_spectrum_spans_the_merged_histogram() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..=1000 {
            h.record(v).unwrap();
        }
        let s = spectrum(&h);
        assert_eq!((s[0], *s.last().unwrap()), ((0.0, 1.0), (100.0, 1000.0)));
        assert_eq!(s.iter().find(|(p, _)| *p == 50.0).map(|(_, v)| *v), Some(500.0));
        assert!(spectrum(&Histogram::<u64>::new(3).unwrap()).is_empty());
    }
}
