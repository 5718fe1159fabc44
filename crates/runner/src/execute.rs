//! `callbench run`: every experiment of a suite in order; in each, its servers started pinned and
//! verified, then K rounds in which every cell runs once (interleaved, so slow drifts of the
//! machine spread over all cells instead of biasing one), results.json rewritten after each
//! repetition, comparisons at the experiment's end, servers stopped.

use crate::fleet::{self, Fleet};
use crate::interference::{self, Sides};
use crate::plan::{self, CellKind, CellPlan};
use crate::progress::{server_warmup_key, Progress};
use crate::repetition;
use crate::store::Store;
use crate::suite::{ExperimentSpec, Suite};
use callbench_harness::manifest::{self, Protocol};
use callbench_harness::program::{self, ProgramManifest};
use callbench_harness::repo::Repo;
use callbench_report::analysis;
use callbench_report::model::{Cell, CellStatus, Experiment, Reference, Results, SuiteRecord, SCHEMA};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub struct Options {
    pub suite_text: String,
    pub suite_file: String,
    pub command_line: Vec<String>,
    pub client_cpus: Vec<usize>,
    pub server_cpus: Vec<usize>,
    /// Overrides the suite's repetitions (e.g. a quick look with 2).
    pub repetitions: Option<usize>,
    pub cancel: Arc<AtomicBool>,
    /// A line on stderr per experiment and round.
    pub quiet: bool,
}

/// Runs the suite into `store`; returns the results (complete unless interrupted).
/// Call [`prepare`] first.
pub async fn run(repo: &Repo, suite: &Suite, store: &Store, o: &Options) -> Result<Results, String> {
    let environment = crate::environment::record(repo, o.command_line.clone(), &o.client_cpus, &o.server_cpus);
    let mut results = Results {
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
    };
    let steadiness = crate::steadiness::probe(&o.client_cpus, &o.server_cpus);
    for warning in &steadiness.warnings {
        eprintln!("callbench: steadiness: {warning}");
    }
    results.suite.interval_floor = suite.interval_floor.unwrap_or(steadiness.loop_spread);
    results.steadiness = Some(steadiness);
    store.write_results(&results)?;
    crate::pinning::pin_self(&o.client_cpus)?;
    let mut progress = Progress::new(suite, o.repetitions, o.quiet);
    for spec in &suite.experiments {
        if o.cancel.load(Ordering::Relaxed) {
            break;
        }
        progress.show(&format!("{}: starting its servers", spec.id), true);
        run_experiment(repo, suite, spec, store, o, &mut results, &mut progress).await?;
        progress.end_line();
        print!("{}", crate::terminal::experiment_table(&results, &spec.id));
    }
    results.interrupted = o.cancel.load(Ordering::Relaxed);
    results.complete = !results.interrupted;
    results.environment.finished_at = Some(crate::environment::utc_now());
    store.write_results(&results)?;
    Ok(results)
}

/// Before anything starts or is written: every server the suite names must exist, and the builds
/// they need are run (identical build commands once).
pub fn prepare(repo: &Repo, suite: &Suite, build: bool) -> Result<(), String> {
    let known = manifest::discover(repo).map_err(|e| format!("{e:#}"))?;
    let programs = program::discover(repo).map_err(|e| format!("{e:#}"))?;
    let mut builds: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut python_needed = false;
    for e in &suite.experiments {
        if e.kind.as_deref() == Some("processing") {
            for name in &e.servers {
                let m = programs.iter().find(|m| &m.name == name).ok_or_else(|| {
                    let names: Vec<&str> = programs.iter().map(|m| m.name.as_str()).collect();
                    format!("experiment '{}': unknown program '{name}' (known: {})", e.id, names.join(", "))
                })?;
                if let Some(argv) = m.build_argv(repo) {
                    builds.entry(argv).or_insert_with(|| m.name.clone());
                }
            }
            continue;
        }
        if e.kind.as_deref() == Some("python") {
            python_needed = true;
        }
        for text in &e.servers {
            let (s, caller) = match e.kind.as_deref() {
                Some("python") => {
                    let m = crate::python::Mechanism::parse(text)?;
                    match m.server.clone() {
                        Some(name) => (plan::ServerSpec { name, http2: false }, Some(m)),
                        None => continue,
                    }
                }
                _ => (plan::ServerSpec::parse(text)?, None),
            };
            if s.is_inproc() {
                continue;
            }
            let m = known.iter().find(|m| m.name == s.name).ok_or_else(|| {
                let names: Vec<&str> = known.iter().map(|m| m.name.as_str()).collect();
                format!("experiment '{}': unknown server '{}' (known: inproc, {})", e.id, s.name, names.join(", "))
            })?;
            if let Some(caller) = caller.filter(|c| (c.transport() == "grpc") != (m.protocol == Protocol::Grpc)) {
                return Err(format!(
                    "experiment '{}': {} calls {} servers; {} is {}",
                    e.id,
                    caller.client,
                    if caller.transport() == "grpc" { "gRPC" } else { "REST" },
                    m.name,
                    if m.protocol == Protocol::Grpc { "gRPC" } else { "REST" }
                ));
            }
            if s.http2 && m.protocol != Protocol::Rest {
                return Err(format!(
                    "experiment '{}': '+h2' is for REST servers; {} is gRPC (always HTTP/2)",
                    e.id, m.name
                ));
            }
            if let Some(argv) = m.build_argv(repo) {
                builds.entry(argv).or_insert_with(|| m.name.clone());
            }
        }
    }
    // Identical build commands (the Rust workspace) run once.
    for (argv, name) in builds.iter().filter(|_| build) {
        callbench_harness::process::run_build(repo, name, argv).map_err(|e| format!("{e:#}"))?;
    }
    if python_needed {
        crate::python::prepare(repo, build)?;
    }
    Ok(())
}

fn default_headline(spec: &ExperimentSpec, suite: &Suite) -> String {
    let load = spec.load.over(&suite.defaults);
    if load.rate.is_some() {
        "latency_p99_us".into()
    } else if load.concurrency.unwrap_or(1) == 1 {
        "latency_p50_us".into()
    } else {
        "throughput_per_s".into()
    }
}

async fn run_experiment(
    repo: &Repo,
    suite: &Suite,
    spec: &ExperimentSpec,
    store: &Store,
    o: &Options,
    results: &mut Results,
    progress: &mut Progress,
) -> Result<(), String> {
    let plans = plan::cells(suite, spec)?;
    results.experiments.push(Experiment {
        id: spec.id.clone(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        seeds: spec.seeds.clone(),
        sweep: spec.sweep.as_ref().map(|s| s.param.clone()),
        headline: spec.headline.clone().unwrap_or_else(|| default_headline(spec, suite)),
        references: spec
            .references
            .iter()
            .map(|r| Reference {
                seed: r.seed.clone(),
                what: r.what.clone(),
                article: r.article.clone(),
                cell: r.cell.as_ref().map(|c| format!("{}/{c}", spec.id)),
                metric: r.metric.clone(),
                note: r.note.clone(),
            })
            .collect(),
    });
    let mut fleet = Fleet::new(repo, o.server_cpus.clone());
    let programs = match spec.kind.as_deref() {
        Some("processing") => program::discover(repo).map_err(|e| format!("{e:#}"))?,
        _ => Vec::new(),
    };
    let python = crate::python::interpreter(repo);
    let python_versions = match spec.kind.as_deref() {
        Some("python") => crate::python::versions(&python),
        _ => BTreeMap::new(),
    };
    let mut cells: Vec<(CellPlan, usize, Option<f64>)> = Vec::new();
    let mut warmed = std::collections::BTreeSet::new();
    for p in plans {
        let rate = match &p.fields.rate {
            Some(value) => plan::resolve_rate(value, |exp| slowest_throughput(results, exp, &p.workload)),
            None => Ok(f64::NAN),
        };
        let index = results.cells.len();
        let mut cell = new_cell(&p, rate.as_ref().ok().copied().filter(|r| r.is_finite()));
        if let Err(e) = &rate {
            cell.status = CellStatus::Error;
            cell.error = Some(e.clone());
        }
        if let CellKind::Python(m) = &p.kind {
            if !results.servers.iter().any(|s| s.name == p.server.name) {
                results.servers.push(m.record(&python_versions));
            }
            cell.transport = m.transport().into();
            if let (Some(server), None) = (&m.server, &cell.error) {
                if let Err(reason) = fleet.ensure(server, &p.mode(), &mut results.servers).await {
                    cell.status = CellStatus::NotMeasured;
                    cell.error = Some(reason);
                }
            }
        } else if p.kind == CellKind::Processing {
            if let Some(m) = programs.iter().find(|m| m.name == p.server.name) {
                if !results.servers.iter().any(|s| s.name == m.name) {
                    results.servers.push(fleet::program_record(repo, m));
                }
                cell.params.insert("language".into(), serde_json::json!(m.language));
            }
            cell.transport = "process".into();
        } else if p.server.is_inproc() {
            if !results.servers.iter().any(|s| s.name == "inproc") {
                results.servers.push(fleet::inproc_record());
            }
        } else if cell.error.is_none() {
            match fleet.ensure(&p.server.name, &p.mode(), &mut results.servers).await {
                Ok(running) => {
                    let key = (p.server.label(), p.mode());
                    if let (Some(warmup), false) = (&spec.server_warmup, warmed.contains(&key)) {
                        let (addr, grpc) = (running.addr(), running.protocol == Protocol::Grpc);
                        let started = std::time::Instant::now();
                        warm_up_server(spec, &p, addr, grpc, warmup, o).await;
                        progress.done(&server_warmup_key(&spec.id, &p.server.label()), started.elapsed());
                        warmed.insert(key);
                    }
                }
                Err(reason) => {
                    cell.status = CellStatus::NotMeasured;
                    cell.error = Some(reason);
                }
            }
        }
        if cell.transport.is_empty() {
            let protocol = results.servers.iter().find(|s| s.name == p.server.name).map(|s| s.protocol.as_str());
            cell.transport = if protocol == Some("grpc") { "grpc" } else { "rest-h1" }.into();
        }
        results.cells.push(cell);
        cells.push((p, index, rate.ok().filter(|r| r.is_finite())));
    }
    store.write_results(results)?;
    let rounds = cells.iter().map(|(p, _, _)| o.repetitions.unwrap_or(p.repetitions)).max().unwrap_or(0);
    let mut histograms = crate::slow_spells::Histograms::new();
    warm_up_round(spec, &cells, &mut fleet, results, o, progress).await;
    'rounds: for round in 0..rounds {
        let what = format!("{}: round {}/{rounds}", spec.id, round + 1);
        progress.show(&what, true);
        for (p, index, rate) in &cells {
            if o.cancel.load(Ordering::Relaxed) {
                break 'rounds;
            }
            let cell = &results.cells[*index];
            if round >= o.repetitions.unwrap_or(p.repetitions)
                || !matches!(cell.status, CellStatus::Ok | CellStatus::Partial)
            {
                continue;
            }
            let mut reruns = 0;
            let started = std::time::Instant::now();
            let outcome = loop {
                let outcome = match (&p.kind, programs.iter().find(|m| m.name == p.server.name)) {
                    (CellKind::Processing, Some(program)) => measure_program(repo, program, p, o).await,
                    (CellKind::Python(m), _) => measure_python(repo, &python, p, m, &mut fleet, results, o).await,
                    _ => measure_once(p, *rate, &mut fleet, results, o).await,
                };
                // A repetition others disturbed is measured again (bounded), so the interval
                // shows the server's spread rather than the neighbours'.
                let cell = &mut results.cells[*index];
                match &outcome {
                    Ok(m) if !m.cancelled && !o.cancel.load(Ordering::Relaxed) => match &m.metrics.disturbed {
                        Some(why)
                            if reruns < RERUNS_PER_REPETITION
                                && (cell.reruns as usize) < o.repetitions.unwrap_or(p.repetitions) =>
                        {
                            reruns += 1;
                            cell.reruns += 1;
                            if !o.quiet {
                                eprintln!(
                                    "\r{}: repetition {} of {} disturbed ({why}): measuring it again",
                                    spec.id,
                                    round + 1,
                                    cell.id
                                );
                            }
                        }
                        _ => break outcome,
                    },
                    _ => break outcome,
                }
            };
            progress.done(&p.id, started.elapsed());
            progress.show(&what, false);
            let cell = &mut results.cells[*index];
            match outcome {
                Ok(m) if m.cancelled => {
                    cell.status = CellStatus::Interrupted;
                    cell.error = Some(format!("interrupted during repetition {}", round + 1));
                }
                Ok(m) => {
                    if m.metrics.calls_errors > 0 {
                        cell.status = CellStatus::Partial;
                        cell.error = Some(format!("failed calls: {:?}", m.metrics.errors));
                    }
                    cell.runs.push(m.metrics);
                    histograms.entry(*index).or_default().push((m.histogram, m.window));
                }
                Err(e) => {
                    cell.status =
                        if e.starts_with("server died:") { CellStatus::ServerCrashed } else { CellStatus::Error };
                    cell.error = Some(e);
                }
            }
            finish_cell(results, *index, histograms.get(index).map(|v| &v[..]).unwrap_or(&[]), store, o);
            store.write_results(results)?;
        }
    }
    crate::slow_spells::measure_again(&spec.id, &cells, &mut histograms, &mut fleet, results, store, o, progress)
        .await?;
    for (p, index, _) in &cells {
        let cell = &mut results.cells[*index];
        if cell.status == CellStatus::Ok && cell.runs.len() < o.repetitions.unwrap_or(p.repetitions) {
            cell.status = CellStatus::Interrupted;
            cell.error.get_or_insert_with(|| format!("{} of {} repetitions ran", cell.runs.len(), p.repetitions));
        }
    }
    results.comparisons.extend(analysis::compare_experiment(results, &spec.id));
    fleet.stop_all();
    store.write_results(results)
}

/// Round 0: every load cell once before the measured rounds, nothing recorded. Without it the
/// first round ran up to 35% slower for the first seconds of an experiment (every server at once,
/// 2026-11-24), which alone made most sequential cells noisy; JMH's warm-up iterations do this.
async fn warm_up_round(
    spec: &ExperimentSpec,
    cells: &[(CellPlan, usize, Option<f64>)],
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
    progress: &mut Progress,
) {
    let what = format!("{}: warm-up round", spec.id);
    progress.show(&what, true);
    for (p, index, rate) in cells {
        let cell = &results.cells[*index];
        let load = matches!(p.kind, CellKind::Load) && !p.server.is_inproc();
        if !load || o.cancel.load(Ordering::Relaxed) || cell.status != CellStatus::Ok {
            continue;
        }
        let started = std::time::Instant::now();
        let _ = measure_once(p, *rate, fleet, results, o).await;
        progress.done(&p.id, started.elapsed());
        progress.show(&what, false);
    }
}

/// How many times one repetition is measured again when others disturbed it (a cell re-runs at
/// most as many repetitions as it has).
const RERUNS_PER_REPETITION: usize = 2;

/// The experiment's `server_warmup`: closed-loop load on each of its workloads in turn, the
/// cell's settings otherwise, nothing recorded. A failure here shows in the cells that follow.
async fn warm_up_server(
    spec: &ExperimentSpec,
    p: &CellPlan,
    addr: std::net::SocketAddr,
    grpc: bool,
    warmup: &str,
    o: &Options,
) {
    let Ok(total) = callbench_harness::load::parse::duration(warmup) else { return };
    if !o.quiet {
        eprint!("\r{}: warming up {} for {warmup}   ", spec.id, p.server.label());
    }
    let share = total / spec.workloads.len().max(1) as u32;
    for workload in &spec.workloads {
        let mut plan = p.clone();
        plan.workload = workload.clone();
        let Ok(mut load) = plan.load_spec(Some(addr), grpc, None) else { continue };
        load.duration = Some(share);
        load.calls = None;
        load.warmup = std::time::Duration::ZERO;
        if o.cancel.load(Ordering::Relaxed) || repetition::run(&load, None, None, o.cancel.clone()).await.is_err() {
            return;
        }
    }
}

/// One repetition of a processing cell: one process of the program, on the server CPUs.
async fn measure_program(
    repo: &Repo,
    program: &ProgramManifest,
    p: &CellPlan,
    o: &Options,
) -> Result<repetition::Measured, String> {
    // The program runs on the server CPUs and is this process's child: its time is "ours" there.
    let sides = Sides { client: &o.server_cpus, server: &[] };
    let before = interference::snapshot(&[]);
    let outcome = crate::processing::measure(repo, program, p, &o.server_cpus, o.cancel.clone()).await;
    judged(outcome, &before, &[], &sides)
}

/// `outcome` with the interference between `before` and now recorded and judged (for cells
/// measured as a process of their own, without the engine's window edges).
fn judged(
    outcome: Result<repetition::Measured, String>,
    before: &interference::Snapshot,
    server_pids: &[i32],
    sides: &Sides,
) -> Result<repetition::Measured, String> {
    let after = interference::snapshot(server_pids);
    outcome.map(|mut m| {
        let calls = m.metrics.calls_ok + m.metrics.calls_errors;
        m.metrics.interference = interference::between(before, &after, sides, calls);
        m.metrics.disturbed = m.metrics.interference.as_ref().and_then(interference::disturbed);
        m
    })
}

/// One repetition of a Python cell: one run of the Python caller, on the client CPUs.
async fn measure_python(
    repo: &Repo,
    python: &std::path::Path,
    p: &CellPlan,
    m: &crate::python::Mechanism,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<repetition::Measured, String> {
    let Some(server) = &m.server else {
        let sides = Sides { client: &o.client_cpus, server: &[] };
        let before = interference::snapshot(&[]);
        let outcome = crate::python::measure(repo, python, p, m, None, &o.client_cpus, o.cancel.clone()).await;
        return judged(outcome, &before, &[], &sides);
    };
    if let Some(crash) = fleet.check_alive(server, &p.mode(), &mut results.servers) {
        return Err(format!("server died: {crash}"));
    }
    let running = fleet.ensure(server, &p.mode(), &mut results.servers).await?;
    let wire = crate::python::Wire { addr: running.addr(), pid: running.group() };
    let pids = crate::measure::group_pids(running.group());
    let sides = Sides { client: &o.client_cpus, server: &o.server_cpus };
    let before = interference::snapshot(&pids);
    let outcome = crate::python::measure(repo, python, p, m, Some(wire), &o.client_cpus, o.cancel.clone()).await;
    let outcome = judged(outcome, &before, &pids, &sides);
    if let Some(crash) = fleet.check_alive(server, &p.mode(), &mut results.servers) {
        return Err(format!("server died: {crash}"));
    }
    outcome
}

/// One repetition of a cell, with the server's crash (if any) turned into the error.
pub(crate) async fn measure_once(
    p: &CellPlan,
    rate: Option<f64>,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    o: &Options,
) -> Result<repetition::Measured, String> {
    let (addr, group, grpc) = if p.server.is_inproc() {
        (None, None, false)
    } else {
        // A server that died since the cell's last repetition ends the cell (the next cell
        // restarts it): the cell's runs must all come from one process.
        if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), &mut results.servers) {
            return Err(format!("server died: {crash}"));
        }
        let running = fleet.ensure(&p.server.name, &p.mode(), &mut results.servers).await?;
        (Some(running.addr()), Some(running.group()), running.protocol == Protocol::Grpc)
    };
    let spec = p.load_spec(addr, grpc, rate)?;
    let server_cpus: &[usize] = if p.server.is_inproc() { &[] } else { &o.server_cpus };
    let sides = Sides { client: &o.client_cpus, server: server_cpus };
    let outcome = repetition::run(&spec, group, Some(&sides), o.cancel.clone()).await;
    if !p.server.is_inproc() {
        if let Some(crash) = fleet.check_alive(&p.server.name, &p.mode(), &mut results.servers) {
            return Err(format!("server died: {crash}"));
        }
    }
    outcome
}

fn new_cell(p: &CellPlan, rate: Option<f64>) -> Cell {
    let transport = if p.server.is_inproc() {
        "inproc".to_string()
    } else if p.server.http2 {
        "rest-h2".to_string()
    } else {
        String::new() // filled when the server's protocol is known (below)
    };
    Cell {
        id: p.id.clone(),
        experiment: p.experiment.clone(),
        server: p.server.label(),
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
    }
}

/// Summary, spectrum and raw histograms of a cell after a repetition.
pub(crate) fn finish_cell(
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

/// The lowest median throughput measured in `experiment` for `workload`, in-process excluded.
fn slowest_throughput(results: &Results, experiment: &str, workload: &str) -> Option<f64> {
    results
        .cells
        .iter()
        .filter(|c| c.experiment == experiment && c.workload == workload && c.transport != "inproc")
        .filter_map(|c| c.summary.get("throughput_per_s").map(|e| e.median))
        .filter(|t| *t > 0.0)
        .min_by(|a, b| a.total_cmp(b))
}
