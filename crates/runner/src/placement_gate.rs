//! After an experiment's rounds: which repetitions ran with the client's and the server's CPUs
//! placed otherwise than most of the experiment's (near or far, see `callbench_results::placement`),
//! and a wait, bounded, until the hypervisor puts them back before one is measured again: a run's
//! noisy cells over loopback were those with repetitions in both placements
//! (bench/results/methodology-2026-11.md#one-placement-per-experiment).

use crate::plan::{CellKind, CellPlan};
use callbench_machine::cache_distance::round_trip_ns;
use callbench_results::model::RunMetrics;
use callbench_results::placement::{self, Placement, DISTANCE_CHANGED};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one experiment's pass waits in all for the usual placement: the far placement holds
/// for tens of seconds at a time, and at times for a whole experiment
/// (bench/results/methodology-2026-11.md#placement-and-noisy-cells).
const WAIT_BUDGET: Duration = Duration::from_secs(20);
/// Between two looks at where the CPUs are (each a few ms of both spinning).
const POLL: Duration = Duration::from_millis(200);

/// The placement an experiment's repetitions are held to (the round trips counted as it), and
/// the CPUs to look at.
pub struct Gate {
    usual: std::ops::Range<f64>,
    usual_trip: f64,
    cpus: (usize, usize),
    wait_left: Duration,
}

impl Gate {
    /// From the runs measured so far (`all`, for the boundary between near and far), this
    /// experiment's (`experiment`) and the round trip between the CPUs now (`now`). The usual
    /// placement is the one the CPUs are in now when a third of the experiment's repetitions or
    /// more had it: measuring the others again now costs less than waiting for the other
    /// placement, which holds for minutes at times (bench/results/methodology-2026-11.md#one-placement-per-experiment).
    /// Otherwise it is the one most had.
    /// When all so far were in one placement, it is round trips within [`DISTANCE_CHANGED`] of
    /// theirs: the slow-spell pass, replacing far repetitions, otherwise brought near ones into
    /// an experiment measured far until then. None when the CPUs were not measured.
    pub fn new<'a>(
        all: impl IntoIterator<Item = &'a RunMetrics>,
        experiment: impl IntoIterator<Item = &'a RunMetrics> + Clone,
        now: Option<f64>,
        client_cpus: &[usize],
        server_cpus: &[usize],
    ) -> Option<Gate> {
        let cpus = (*client_cpus.first()?, *server_cpus.first()?);
        let (usual, usual_trip) = match placement::boundary(&placement::trips(all)) {
            Some(split) => {
                let placed: Vec<Placement> =
                    experiment.clone().into_iter().filter_map(|r| placement::of(r, split)).collect();
                let current = now.map(|t| if t < split { Placement::Near } else { Placement::Far });
                let usual = match current {
                    Some(c) if placed.iter().filter(|p| **p == c).count() * 3 >= placed.len() => c,
                    _ => placement::usual(experiment.clone(), split)?,
                };
                let trip = placement::median_trip(experiment, split, usual)?;
                (if usual == Placement::Near { 0.0..split } else { split..f64::INFINITY }, trip)
            }
            None => {
                let trip = callbench_results::stats::median(&placement::trips(experiment))?;
                (trip / DISTANCE_CHANGED..trip * DISTANCE_CHANGED, trip)
            }
        };
        Some(Gate { usual, usual_trip, cpus, wait_left: WAIT_BUDGET })
    }

    /// Why `run` is measured again, when it was not in the usual placement.
    pub fn outside(&self, run: &RunMetrics) -> Option<String> {
        let [before, after] = run.cpus_round_trip_ns?;
        let trips = match (self.usual.contains(&before), self.usual.contains(&after)) {
            (true, true) => return None,
            (false, false) => format!("{:.0} ns apart", (before + after) / 2.0),
            _ => format!("{before:.0} ns apart before it and {after:.0} ns after"),
        };
        Some(format!(
            "the client's and the server's CPUs were {trips} (a cache line's round trip), {:.0} ns in most of the \
             experiment's repetitions: the hypervisor had moved them",
            self.usual_trip
        ))
    }

    /// True when `run` was measured in the usual placement.
    pub fn usual(&self, run: &RunMetrics) -> bool {
        run.cpus_round_trip_ns.is_some() && self.outside(run).is_none()
    }

    /// Waits until the CPUs are in the usual placement again, at most `limit` this time; false when
    /// that or the experiment's wait budget ran out (or the run was cancelled) first.
    pub async fn wait(&mut self, cancel: &AtomicBool, limit: Duration) -> bool {
        let mut limit = limit;
        loop {
            let began = Instant::now();
            let (client, server) = self.cpus;
            let now = tokio::task::spawn_blocking(move || round_trip_ns(client, server)).await.ok().flatten();
            if now.is_some_and(|t| self.usual.contains(&t)) {
                return true;
            }
            if cancel.load(Ordering::Relaxed) || self.wait_left.is_zero() || limit.is_zero() {
                return false;
            }
            tokio::time::sleep(POLL.min(self.wait_left).min(limit)).await;
            self.wait_left = self.wait_left.saturating_sub(began.elapsed());
            limit = limit.saturating_sub(began.elapsed());
        }
    }
}

/// Whether a cell's repetitions are held to their experiment's placement: engine calls to a
/// server over loopback. In-process calls cross no CPU; across an emulated link a round trip of
/// milliseconds dwarfs the microseconds the placement moves a call
/// (bench/results/code-notes-2026-12.md#what-the-placement-moves-a-call); a cluster's or a peer
/// tool's client does not run on the CPUs measured.
pub fn held(p: &CellPlan) -> bool {
    p.kind == CellKind::Load && !p.server.is_inproc() && p.cluster.is_none() && p.fields.network.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(before: f64, after: f64) -> RunMetrics {
        RunMetrics { cpus_round_trip_ns: Some([before, after]), ..Default::default() }
    }

    #[test]
    fn repetitions_outside_the_experiments_usual_placement_say_how_far_apart_the_cpus_were() {
        let experiment = [run(65.0, 64.0), run(65.0, 66.0), run(220.0, 214.0), run(65.0, 250.0)];
        let gate = Gate::new(&experiment, &experiment, None, &[0], &[1]).expect("two placements");
        assert!(gate.outside(&experiment[0]).is_none() && gate.usual(&experiment[0]));
        let far = gate.outside(&experiment[2]).expect("far is outside");
        assert!(far.starts_with("the client's and the server's CPUs were 217 ns apart (a cache line's"), "{far}");
        assert!(far.contains(", 65 ns in most of the experiment's repetitions"), "{far}");
        let moved = gate.outside(&experiment[3]).expect("moved is outside");
        assert!(moved.contains("65 ns apart before it and 250 ns after"), "{moved}");
        assert!(!gate.usual(&experiment[3]) && !gate.usual(&RunMetrics::default()));
        // Far now, and a third of the repetitions were: held to far, measuring the near ones again.
        let now_far = Gate::new(&experiment, &experiment[1..], Some(230.0), &[0], &[1]).unwrap();
        assert!(now_far.usual(&experiment[2]) && now_far.outside(&experiment[1]).is_some());
        // Near now though fewer than a third were: the commoner placement (far).
        let few_near = [run(65.0, 64.0), run(220.0, 214.0), run(230.0, 215.0), run(225.0, 215.0)];
        let gate = Gate::new(&few_near, &few_near, Some(60.0), &[0], &[1]).unwrap();
        assert!(gate.usual(&few_near[1]) && !gate.usual(&few_near[0]));
        // One placement so far: held to round trips near theirs (a near one outside, a far one in).
        let steady = [run(210.0, 220.0), run(230.0, 205.0), run(300.0, 200.0)];
        let gate = Gate::new(&steady, &steady, None, &[0], &[1]).expect("held to the one placement");
        assert!(steady.iter().all(|r| gate.usual(r)));
        assert!(gate.outside(&run(66.0, 65.0)).unwrap().contains("66 ns apart (a cache line's round trip), 215 ns in"));
        assert!(Gate::new(&steady, &steady, None, &[0], &[]).is_none(), "no server CPU: nothing to probe");
    }

    #[tokio::test]
    async fn a_wait_ends_when_the_budget_is_spent_or_the_placement_is_back() {
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return;
        }
        // A boundary no round trip can be below: the CPUs are never near, so the wait gives up.
        let experiment = [run(0.001, 0.001), run(0.001, 0.001), run(500.0, 500.0)];
        let mut gate = Gate::new(&experiment, &experiment, None, &[0], &[1]).unwrap();
        // A limit shorter than the experiment's budget ends this wait and leaves the rest.
        assert!(!gate.wait(&AtomicBool::new(false), Duration::from_millis(300)).await);
        assert!(gate.wait_left < WAIT_BUDGET && gate.wait_left > WAIT_BUDGET / 2, "{:?} left", gate.wait_left);
        gate.wait_left = Duration::from_millis(300);
        assert!(!gate.wait(&AtomicBool::new(false), Duration::MAX).await);
        assert!(gate.wait_left.is_zero());
        // Usual placement far with the boundary below any round trip: back at the first probe
        // that completes (on a busy machine one may not, its threads not scheduled in time), long
        // before the budget is spent.
        let far = [run(0.001, 0.001), run(500.0, 500.0), run(500.0, 500.0)];
        let mut gate = Gate::new(&far, &far, None, &[0], &[1]).unwrap();
        assert!(gate.wait(&AtomicBool::new(false), Duration::MAX).await);
        assert!(gate.wait_left > WAIT_BUDGET / 2, "{:?} of {WAIT_BUDGET:?} left", gate.wait_left);
    }
}
