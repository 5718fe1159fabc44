//! One repetition of a cell by the load engine in this process: the same run as `callbench load`, with the server's CPU read
//! at the engine's window edges and its memory sampled throughout.

use super::outcome::Measured;
use crate::outside::{per_call, CountedBy, Span};
use callbench_engine::{Edge, EdgeHook};
use callbench_link::counters::{Counts, NamespaceCounters};
use callbench_load::{build, LoadSpec};
use callbench_machine::interference::{self, Sides};
use callbench_machine::process_group::{self, CpuReading, RssSampler};
use callbench_results::model::RunMetrics;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs `spec` once; `server_group` is the server's process group (None in-process). With
/// `sides`, the CPUs the client and the server are pinned to, the interference over the measured
/// window is recorded and judged; with `counters`, the client namespace's, what it counted over
/// the window.
pub(crate) async fn run(
    spec: &LoadSpec,
    server_group: Option<i32>,
    sides: Option<&Sides<'_>>,
    counters: Option<Arc<NamespaceCounters>>,
    cancel: Arc<AtomicBool>,
) -> Result<Measured, String> {
    let pids = server_group.map(process_group::group_pids).unwrap_or_default();
    run_with_pids(spec, pids, sides, counters, cancel).await
}

/// [`run`], the server's CPU read from `pids` (none: not measured).
pub(crate) async fn run_with_pids(
    spec: &LoadSpec,
    pids: Vec<i32>,
    sides: Option<&Sides<'_>>,
    counters: Option<Arc<NamespaceCounters>>,
    cancel: Arc<AtomicBool>,
) -> Result<Measured, String> {
    let built = build::build(spec).await?;
    let mut plan = spec.plan(built.concurrency, None, cancel)?;
    let edges: SharedEdges = Arc::new(Mutex::new(EdgeReadings::default()));
    if !pids.is_empty() || sides.is_some() || counters.is_some() {
        let (edges, pids, machine) = (edges.clone(), pids.clone(), sides.is_some());
        // Every other process is read before the engine's clock starts and after its last call, not at
        // an edge calls are due at: reading them all takes about a millisecond.
        let others_before_run = if machine { interference::others_now(&pids) } else { None };
        plan.load.edges = Some(EdgeHook(Arc::new(move |edge| {
            let reading = (!pids.is_empty()).then(|| process_group::read_cpu(&pids));
            let snapshot = machine.then(|| match edge {
                Edge::RunStart | Edge::WindowStart => {
                    interference::snapshot_without_others(&pids).with_others(others_before_run.clone())
                }
                Edge::End => interference::snapshot(&pids),
            });
            let net = counters.as_ref().and_then(|c| c.read().ok());
            let mut e = edges.lock().unwrap_or_else(|p| p.into_inner());
            match edge {
                // Without a warm-up the window starts with the run: no WindowStart edge comes.
                Edge::RunStart => {
                    (e.run_start, e.machine_at_window, e.net_at_run, e.net_at_window) = (reading, snapshot, net, net)
                }
                Edge::WindowStart => (e.window_start, e.machine_at_window, e.net_at_window) = (reading, snapshot, net),
                Edge::End => (e.end, e.machine_at_end, e.net_at_end) = (reading, snapshot, net),
            }
        })));
    }
    // Outside the window, with the server idle: how far apart the two sides' CPUs are now.
    let cpus = sides.and_then(|s| Some((*s.client.first()?, *s.server.first()?))).filter(|(c, s)| c != s);
    let distance = || cpus.and_then(|(c, s)| callbench_machine::cache_distance::round_trip_ns(c, s));
    let before = distance();
    let rss = (!pids.is_empty()).then(|| RssSampler::start(pids.clone()));
    let result = built.run(plan, &callbench_load::Unwatched).await?;
    let after = distance();
    let peak_rss = rss.map(|r| r.peak());
    let s = result.stats.summary(&result.info);
    if let Some(problem) =
        callbench_load::startup::problem(&result.info, built.concurrency, s.calls.ok + s.calls.errors)
    {
        return Err(problem);
    }
    let window = result.info.window;
    let calls = s.calls.ok.max(1) as f64;
    let (server, interference, outside) = {
        let e = edges.lock().unwrap_or_else(|p| p.into_inner());
        let machine = match (&e.machine_at_window, &e.machine_at_end, sides) {
            (Some(a), Some(b), Some(sides)) => interference::between(a, b, sides, s.calls.ok + s.calls.errors),
            _ => None,
        };
        // Bytes over the window, as the engine counts its own; connections over the whole run.
        let outside = match (&e.net_at_run, &e.net_at_window, &e.net_at_end) {
            (Some(run), Some(window), Some(end)) => {
                let opened = end.since(run).tcp_active_opens;
                per_call(&end.since(window), opened, s.calls.ok + s.calls.errors, CountedBy::Client, Span::Window)
            }
            _ => None,
        };
        (e.window(), machine, outside)
    };
    let metrics = RunMetrics {
        server_cpu_us_per_call: server.map(|(cpu, _)| cpu.as_secs_f64() * 1e6 / calls),
        server_cpu_cores: server.map(|(cpu, span)| cpu.as_secs_f64() / span.as_secs_f64().max(1e-9)),
        server_rss_peak_kib: peak_rss,
        interference,
        disturbed: interference.as_ref().and_then(interference::disturbed),
        outside,
        cpus_round_trip_ns: before.zip(after).map(|(b, a)| [b, a]),
        ..crate::client_metrics::from_summary(&s, &result.info, spec.warmup)
    };
    Ok(Measured { metrics, histogram: result.stats.latency_us, window, cancelled: result.info.cancelled })
}
/// Readings taken at the engine's run edges (start, window start, end): the server's CPU, and the
/// machine's state for the interference over the measured window.
#[derive(Default)]
pub struct EdgeReadings {
    pub run_start: Option<CpuReading>,
    pub window_start: Option<CpuReading>,
    pub end: Option<CpuReading>,
    pub machine_at_window: Option<callbench_machine::interference::Snapshot>,
    pub machine_at_end: Option<callbench_machine::interference::Snapshot>,
    /// The client namespace's counters at the run's start, the window's start and the end.
    pub net_at_run: Option<Counts>,
    pub net_at_window: Option<Counts>,
    pub net_at_end: Option<Counts>,
}

pub type SharedEdges = Arc<Mutex<EdgeReadings>>;

impl EdgeReadings {
    /// Server CPU time over the measured window and the window's wall time.
    pub fn window(&self) -> Option<(Duration, Duration)> {
        let start = self.window_start.or(self.run_start)?;
        let end = self.end?;
        Some((process_group::cpu_between(&start, &end), end.at?.duration_since(start.at?)))
    }
}
