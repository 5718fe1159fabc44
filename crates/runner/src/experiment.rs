//! One experiment of a suite: its record, its cells prepared by kind (servers started pinned and
//! verified, programs found, Python callers recorded), a warm-up round, then K rounds in which
//! every cell runs once (interleaved, so slow drifts of the machine spread over all cells instead
//! of biasing one), results.json rewritten after each repetition, comparisons at the end.

use crate::again_budget::AgainBudget;
use crate::cell::{self, PlannedCell};
use crate::fleet::{self, Fleet};
use crate::options::Options;
use crate::plan::{self, CellKind, CellPlan};
use crate::progress::{server_warmup_key, Progress};
use crate::repetition::CellError;
use crate::repetition::{self, Measured, Rig};
use crate::store::Store;
use crate::suite::{ExperimentKind, ExperimentSpec, Suite};
use crate::RunError;
use callbench_launcher::manifest::Protocol;
use callbench_launcher::program;
use callbench_launcher::repo::Repo;
use callbench_link::{Link, LinkSpec};
use callbench_machine::interference::tail_disturbed;
use callbench_results::analysis;
use callbench_results::model::{Cell, CellStatus, Experiment, Reference, Results, RunMetrics, SideCpus};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What the cells of one experiment share while it runs.
struct Context<'a> {
    spec: &'a ExperimentSpec,
    rig: Rig<'a>,
}

pub(crate) async fn run(
    repo: &Repo,
    suite: &Suite,
    spec: &ExperimentSpec,
    store: &Store,
    o: &Options,
    results: &mut Results,
    progress: &mut Progress,
) -> Result<(), RunError> {
    let plans = plan::cells(suite, spec)?;
    // With its sides swapped: this process (the engine, the Python callers' parent) moves to the
    // servers' CPUs until the experiment ends, however it ends.
    let swapped;
    let (o, _back) = match spec.swap_cpus {
        true => {
            swapped = o.swapped();
            callbench_machine::pinning::pin_self(&swapped.client_cpus)?;
            (&swapped, Some(Repin(o.client_cpus.clone())))
        }
        false => (o, None),
    };
    let mut experiment = record(suite, spec);
    experiment.cpus = spec.swap_cpus.then(|| SideCpus { client: o.client_cpus.clone(), server: o.server_cpus.clone() });
    results.experiments.push(experiment);
    let programs = match spec.kind {
        ExperimentKind::Processing => program::discover(repo).map_err(|e| RunError::Files(format!("{e:#}")))?,
        _ => Vec::new(),
    };
    let python = crate::python_env::interpreter(repo);
    // Across an emulated link: servers in its server namespace, this thread (the engine's
    // sockets, verify, Python callers, other tools) on its client side until the experiment ends.
    // An experiment of several clients gets a direct path (a veth pair) when it has no link, so
    // every client's connections and bytes are counted outside it; without root, they are not.
    let link = if plans.iter().any(|p| p.fields.network.is_some()) {
        match Link::create(&LinkSpec::transparent(), &o.client_cpus) {
            Ok(link) => Some(link),
            Err(why) if spec.optional && crate::network::may_skip(&why) => {
                return crate::network::skip(&spec.id, &why, store, results)
            }
            Err(why) => return Err(RunError::Machine(why.to_string())),
        }
    } else if plans.iter().any(|p| p.client.is_some()) {
        Link::direct()
            .map_err(|why| {
                eprintln!("callbench: {}: connections and bytes not counted outside the clients: {why}", spec.id)
            })
            .ok()
    } else {
        None
    };
    let _client_side =
        link.as_ref().map(|l| l.client.enter()).transpose().map_err(|e| RunError::Machine(e.to_string()))?;
    let stall = spec.server_stall.iter().map(|s| (callbench_serverkit::stall::ENV.to_string(), s.clone())).collect();
    let host = spec.cluster.as_ref().and_then(|c| c.server_host.clone());
    let fleet = Fleet::new(repo, o.server_cpus.clone())
        .behind(link.as_ref())
        .with_env(stall)
        .listening_on(host)
        .with_user_servers(suite.user_manifests())
        .remembering(&o.verified);
    let results_dir = store.dir.clone();
    let planned: f64 =
        plans.iter().map(|p| crate::progress::planned_seconds(p) * o.repetitions.unwrap_or(p.repetitions) as f64).sum();
    let again = AgainBudget::of_rounds(Duration::from_secs_f64(planned));
    let mut cx = Context { spec, rig: Rig { repo, o, fleet, programs, python, results_dir, again } };
    let cells = prepare_cells(&mut cx, plans, results, progress).await;
    if let Some(link) = &link {
        // A cell of the experiment without a network of its own runs across the bare link.
        let specs =
            cells.iter().map(|c| (c.index, c.plan.fields.network.clone().unwrap_or_else(LinkSpec::transparent)));
        crate::network::measure_links(link, specs, results).map_err(RunError::Machine)?;
    }
    store.write_results(results)?;
    let outcome = rounds(&mut cx, &cells, results, store, progress).await;
    cx.rig.fleet.stop_all();
    outcome?;
    results.comparisons.extend(analysis::compare_experiment(results, &spec.id));
    store.write_results(results)
}

/// Pins this process back to the run's client CPUs when dropped.
struct Repin(Vec<usize>);

impl Drop for Repin {
    fn drop(&mut self) {
        if let Err(why) = callbench_machine::pinning::pin_self(&self.0) {
            eprintln!("callbench: {why}");
        }
    }
}

/// The experiment as results.json records it.
fn record(suite: &Suite, spec: &ExperimentSpec) -> Experiment {
    Experiment {
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
        answer: spec.answer.clone(),
        skipped: None,
        cpus: None,
    }
}

/// The metric that answers the question when the suite names none: p99 latency at a fixed rate,
/// p50 latency at one call in flight, throughput otherwise.
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

/// Every cell into `results.cells`, ready to measure or marked with why it cannot be: its rate
/// resolved, its server started and verified (and warmed up once when the suite asks).
async fn prepare_cells(
    cx: &mut Context<'_>,
    plans: Vec<CellPlan>,
    results: &mut Results,
    progress: &mut Progress,
) -> Vec<PlannedCell> {
    let python_versions = match cx.spec.kind {
        ExperimentKind::Python => crate::python_env::versions(&cx.rig.python),
        _ => BTreeMap::new(),
    };
    let mut warmed = BTreeSet::new();
    let mut cells = Vec::new();
    for p in plans {
        let rate = match &p.fields.rate {
            Some(value) => plan::resolve_rate(value, |exp| slowest_throughput(results, exp, &p.workload)).map(Some),
            None => Ok(None),
        };
        let mut cell = cell::new_cell(&p, rate.as_ref().ok().copied().flatten());
        match &rate {
            Err(e) => (cell.status, cell.error) = (CellStatus::Error, Some(e.to_string())),
            Ok(_) => match &p.kind {
                CellKind::Python(m) => {
                    if !results.servers.iter().any(|s| s.name == p.server.name) {
                        results.servers.push(m.record(&python_versions));
                    }
                    cell.transport = m.transport().into();
                    if let Some(server) = &m.server {
                        if let Err(reason) = cx.rig.fleet.ensure(server, &p.mode(), false, &mut results.servers).await {
                            (cell.status, cell.error) = (CellStatus::NotMeasured, Some(reason));
                        }
                    }
                }
                CellKind::Processing => prepare_program(cx, &p, &mut cell, results),
                CellKind::Load if p.endpoint.is_some() => {
                    // A user's endpoint: running already, probed before the run; nothing to start.
                    if let Some(endpoint) =
                        p.endpoint.as_ref().filter(|e| !results.servers.iter().any(|s| s.name == e.label))
                    {
                        results.servers.push(endpoint.record());
                    }
                }
                CellKind::Load if p.server.is_inproc() => {
                    if !results.servers.iter().any(|s| s.name == "inproc") {
                        results.servers.push(fleet::inproc_record());
                    }
                }
                CellKind::Load => {
                    if let Err(reason) = start_server(cx, &p, &mut warmed, results, progress).await {
                        (cell.status, cell.error) = (CellStatus::NotMeasured, Some(reason));
                    }
                }
                CellKind::Peer(tool) => {
                    let rate = rate.as_ref().ok().copied().flatten();
                    if let Err(reason) =
                        prepare_peer(cx, &p, tool, rate, &mut cell, &mut warmed, results, progress).await
                    {
                        (cell.status, cell.error) = (CellStatus::NotMeasured, Some(reason));
                    }
                }
            },
        }
        if let Some(stall) = &cx.spec.server_stall {
            cell.params.insert("server_stall".into(), serde_json::json!(stall));
            // Only the Rust servers pause (crates/serverkit); another would run without the stall.
            let language = results.servers.iter().find(|s| s.name == p.server.name).map(|s| s.language.clone());
            if cell.status == CellStatus::Ok && (p.server.is_inproc() || language.is_some_and(|l| l != "rust")) {
                cell.status = CellStatus::NotMeasured;
                cell.error = Some(format!("server_stall: {} cannot pause (only the Rust servers do)", p.server.name));
            }
        }
        if cell.transport.is_empty() {
            let protocol = results.servers.iter().find(|s| s.name == p.server.name).map(|s| s.protocol.as_str());
            cell.transport = match protocol {
                Some("grpc") => "grpc",
                Some("raw") => "raw",
                _ => "rest-h1",
            }
            .into();
        }
        if p.server.tls && !p.server.http3 {
            cell.transport += "+tls"; // QUIC's TLS goes without saying
        }
        let index = results.cells.len();
        results.cells.push(cell);
        cells.push(PlannedCell { plan: p, index, rate: rate.ok().flatten() });
    }
    cells
}

/// A peer tool's cell: its server started, then whether the tool can make its calls here (at the
/// cell's `rate`, resolved).
#[allow(clippy::too_many_arguments)]
async fn prepare_peer(
    cx: &mut Context<'_>,
    p: &CellPlan,
    tool: &str,
    rate: Option<f64>,
    cell: &mut Cell,
    warmed: &mut BTreeSet<(String, String)>,
    results: &mut Results,
    progress: &mut Progress,
) -> Result<(), String> {
    let tool = callbench_peers::by_name(tool)?;
    start_server(cx, p, warmed, results, progress).await?;
    let protocol = if results.servers.iter().any(|s| s.name == p.server.name && s.protocol == "grpc") {
        Protocol::Grpc
    } else {
        Protocol::Rest
    };
    let approximated = crate::repetition::peer::check(cx.rig.repo, tool, p, protocol, rate, cx.rig.o)?;
    if !approximated.is_empty() {
        cell.params.insert("approximated".into(), serde_json::json!(approximated));
    }
    Ok(())
}

/// A processing cell: its program's record and language (the program runs per repetition).
fn prepare_program(cx: &Context<'_>, p: &CellPlan, cell: &mut Cell, results: &mut Results) {
    if let Some(m) = cx.rig.programs.iter().find(|m| m.name == p.server.name) {
        if !results.servers.iter().any(|s| s.name == m.name) {
            results.servers.push(fleet::program_record(cx.rig.repo, m));
        }
        cell.params.insert("language".into(), serde_json::json!(m.language));
    }
    cell.transport = "process".into();
}

/// A load cell's server, started and verified (once per server and mode), then warmed up once when
/// the experiment has a `server_warmup`.
async fn start_server(
    cx: &mut Context<'_>,
    p: &CellPlan,
    warmed: &mut BTreeSet<(String, String)>,
    results: &mut Results,
    progress: &mut Progress,
) -> Result<(), String> {
    let running = cx.rig.fleet.ensure(&p.server.name, &p.mode(), p.server.tls, &mut results.servers).await?;
    let key = (p.server.label(), p.mode());
    if let (Some(warmup), false) = (&cx.spec.server_warmup, warmed.contains(&key)) {
        let (addr, protocol) = (running.addr(), running.protocol);
        let started = Instant::now();
        warm_up_server(cx.spec, p, addr, protocol, warmup, cx.rig.o).await;
        progress.done(&server_warmup_key(&cx.spec.id, &p.server.label()), started.elapsed());
        warmed.insert(key);
    }
    Ok(())
}

/// The warm-up round, the measured rounds, the slow spells measured again; then every cell that
/// ran fewer repetitions than planned is marked interrupted.
async fn rounds(
    cx: &mut Context<'_>,
    cells: &[PlannedCell],
    results: &mut Results,
    store: &Store,
    progress: &mut Progress,
) -> Result<(), RunError> {
    let o = cx.rig.o;
    let repetitions = |p: &CellPlan| o.repetitions.unwrap_or(p.repetitions);
    let rounds = cells.iter().map(|c| repetitions(&c.plan)).max().unwrap_or(0);
    let mut histograms = crate::slow_spells::Histograms::new();
    warm_up_round(cx, cells, results, progress).await;
    'rounds: for round in 0..rounds {
        let what = format!("{}: round {}/{rounds}", cx.spec.id, round + 1);
        progress.show(&what, true);
        for c in cells {
            if o.cancel.load(Ordering::Relaxed) {
                break 'rounds;
            }
            let cell = &results.cells[c.index];
            if round >= repetitions(&c.plan) || !analysis::measured_fully(cell) {
                continue;
            }
            let started = Instant::now();
            let outcome = measure_with_reruns(cx, c, round, results).await;
            progress.done(&c.plan.id, started.elapsed());
            progress.show(&what, false);
            if let Some((histogram, window)) = record_outcome(&mut results.cells[c.index], outcome, round) {
                histograms.entry(c.index).or_default().push((histogram, window));
            }
            let hists = histograms.get(&c.index).map(|v| &v[..]).unwrap_or(&[]);
            cell::finish_cell(results, c.index, hists, store, o);
            store.write_results(results)?;
        }
    }
    crate::slow_spells::measure_again(&cx.spec.id, cells, &mut histograms, &mut cx.rig, results, store, progress)
        .await?;
    for c in cells {
        let cell = &mut results.cells[c.index];
        if cell.status == CellStatus::Ok && cell.runs.len() < repetitions(&c.plan) {
            cell.status = CellStatus::Interrupted;
            cell.error.get_or_insert_with(|| format!("{} of {} repetitions ran", cell.runs.len(), c.plan.repetitions));
        }
    }
    Ok(())
}

/// One repetition of `c` by its kind; one that others disturbed is measured again (bounded), so
/// the interval shows the server's spread rather than the neighbours'.
async fn measure_with_reruns(
    cx: &mut Context<'_>,
    c: &PlannedCell,
    round: usize,
    results: &mut Results,
) -> Result<Measured, CellError> {
    let mut reruns = 0;
    loop {
        let started = Instant::now();
        let mut outcome = repetition::measure(&mut cx.rig, c, results).await;
        if reruns > 0 {
            cx.rig.again.spend(started.elapsed());
        }
        // A tail percentile is moved by less steal, and by a stopped client.
        let headline = results.experiment(&cx.spec.id).map(|e| e.headline.as_str()).unwrap_or_default();
        if let Ok(m) = &mut outcome {
            if let (None, Some(i)) = (&m.metrics.disturbed, &m.metrics.interference) {
                let spins = c.plan.client_spins(c.rate);
                m.metrics.disturbed = tail_disturbed(i, m.metrics.client_cpu_cores, spins, headline);
            }
        }
        let cell = &mut results.cells[c.index];
        let disturbed = match &outcome {
            Ok(m) if !m.cancelled && !cx.rig.o.cancel.load(Ordering::Relaxed) => m.metrics.disturbed.as_ref(),
            _ => None,
        };
        let budget = cx.rig.o.repetitions.unwrap_or(c.plan.repetitions);
        let allowed = crate::slow_spells::may_rerun(reruns, cell.reruns, budget);
        if disturbed.is_some() && allowed && !cx.rig.o.quiet {
            if let Some(line) = cx.rig.again.refusal(&cx.spec.id) {
                eprintln!("\r{line}");
            }
        }
        match disturbed {
            Some(why) if allowed && cx.rig.again.allows() => {
                reruns += 1;
                cell.reruns += 1;
                if !cx.rig.o.quiet {
                    eprintln!(
                        "\r{}: repetition {} of {} disturbed ({why}): measuring it again",
                        cx.spec.id,
                        round + 1,
                        cell.id
                    );
                }
            }
            _ => return outcome,
        }
    }
}

/// A repetition's outcome into its cell: the run added (partial when calls failed), or the status
/// that ends the cell. Gives the run's histogram and window to keep.
fn record_outcome(
    cell: &mut Cell,
    outcome: Result<Measured, CellError>,
    round: usize,
) -> Option<(hdrhistogram::Histogram<u64>, std::time::Duration)> {
    match outcome {
        Ok(m) if m.cancelled => {
            cell.status = CellStatus::Interrupted;
            cell.error = Some(format!("interrupted during repetition {}", round + 1));
            None
        }
        Ok(m) => {
            if m.metrics.calls_errors > 0 {
                cell.status = CellStatus::Partial;
                cell.error = Some(failed_calls(&m.metrics));
            }
            cell.runs.push(m.metrics);
            Some((m.histogram, m.window))
        }
        Err(e) => {
            cell.status = e.status();
            cell.error = Some(e.to_string());
            None
        }
    }
}

/// A repetition's failed calls as its cell's error (see `callbench_load::report::failures_text`).
fn failed_calls(m: &RunMetrics) -> String {
    format!("failed calls: {}", callbench_load::report::failures_text(&m.errors, m.first_failure.as_deref()))
}

/// Round 0: every load cell against a server once before the measured rounds, for its warm-up's
/// length, nothing recorded, as JMH's warm-up iterations: without it an experiment's first round
/// ran slower for every server at once, which alone made most sequential cells noisy
/// (bench/results/methodology-2026-11.md#the-warm-up-round). The warm-up's length is enough: what
/// is left to warm since the run holds idle CPUs awake is each server's first calls.
async fn warm_up_round(cx: &mut Context<'_>, cells: &[PlannedCell], results: &mut Results, progress: &mut Progress) {
    let what = format!("{}: warm-up round", cx.spec.id);
    progress.show(&what, true);
    for c in cells {
        if !c.plan.in_warm_up_round()
            || cx.rig.o.cancel.load(Ordering::Relaxed)
            || results.cells[c.index].status != CellStatus::Ok
        {
            continue;
        }
        let started = Instant::now();
        let warm = PlannedCell { plan: c.plan.warm_up_round(), index: c.index, rate: c.rate };
        let _ = repetition::measure(&mut cx.rig, &warm, results).await;
        progress.done(&crate::progress::warm_up_round_key(&c.plan.id), started.elapsed());
        progress.show(&what, false);
    }
}

/// The experiment's `server_warmup`: closed-loop load on each of its workloads in turn, the
/// cell's settings otherwise, nothing recorded. A failure here shows in the cells that follow.
async fn warm_up_server(
    spec: &ExperimentSpec,
    p: &CellPlan,
    addr: std::net::SocketAddr,
    protocol: Protocol,
    warmup: &str,
    o: &Options,
) {
    let Ok(total) = callbench_load::parse::duration(warmup) else { return };
    if !o.quiet {
        eprint!("\r{}: warming up {} for {warmup}   ", spec.id, p.server.label());
    }
    let share = total / spec.workloads.len().max(1) as u32;
    for workload in &spec.workloads {
        let mut plan = p.clone();
        plan.workload = workload.clone();
        let Ok(mut load) = plan.load_spec(Some(addr), protocol, None) else { continue };
        load.duration = Some(share);
        load.calls = None;
        load.warmup = std::time::Duration::ZERO;
        if o.cancel.load(Ordering::Relaxed)
            || repetition::engine::run(&load, None, None, None, o.cancel.clone()).await.is_err()
        {
            return;
        }
    }
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

#[cfg(test)]
mod tests;
