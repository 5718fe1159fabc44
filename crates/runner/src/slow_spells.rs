//! After an experiment's rounds: the repetitions that ran in a slow spell of the machine (the CPU
//! per call of a side doing the same work for every call rose above the cell's median; see
//! `interference::slow_runs`), and those with the CPUs placed otherwise than most of the
//! experiment's (`placement_gate`), are measured again and replaced when the new one is neither. Other processes on the CPUs are caught per repetition (`disturbed`); these spells
//! showed no other process and no steal, so only the sides' own work reveals them.

use crate::cell::{finish_cell, PlannedCell};
use crate::placement_gate::{held, Gate};
use crate::plan::{CellKind, CellPlan};
use crate::progress::Progress;
use crate::repetition::{self, Rig};
use crate::store::Store;
use crate::RunError;
use callbench_machine::interference::{self, SLOW_LIMIT};
use callbench_results::model::{CellStatus, Results, RunMetrics};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub type Histograms = BTreeMap<usize, Vec<(Histogram<u64>, Duration)>>;

/// Which sides of a cell do the same work for every call, so that their CPU per call is the
/// machine's speed: (client, server). Closed loop through the engine or a Python caller (one call
/// at a time) only: in open loop the client spins to start calls on time; a peer tool or a
/// cluster is not measured again here. Nor is a cell
/// across an emulated link: both sides idle a round trip between calls, and what waking costs them
/// then varies far more than the machine's speed (bench/results/code-notes-2026-12.md#cpu-per-call-across-a-link),
/// while the run time they would change is one round trip per call.
fn fixed_work_sides(p: &CellPlan) -> (bool, bool) {
    // A Python caller makes one call at a time: its own CPU per call, and over the wire the
    // server's, are the same work every call (as `python -m callbench.boundary` judges them).
    if let CellKind::Python(m) = &p.kind {
        return (true, m.server.is_some());
    }
    if p.kind != CellKind::Load || p.cluster.is_some() || p.fields.rate.is_some() || p.fields.network.is_some() {
        return (false, false);
    }
    // A user's endpoint may be across a real network (its round trips are not fixed work), and its
    // server's CPU is known only when its pids were given.
    if let Some(endpoint) = &p.endpoint {
        let server = !endpoint.server_pids.is_empty();
        let one_at_a_time = p.fields.concurrency.unwrap_or(1) == 1 && p.fields.rate.is_none();
        return (endpoint.on_loopback() && one_at_a_time, server);
    }
    let inproc = p.server.is_inproc();
    let default = if inproc { 1 } else { callbench_load::spec::DEFAULT_CONCURRENCY };
    match (p.fields.concurrency.unwrap_or(default), inproc) {
        (1, inproc) => (true, !inproc),
        // With calls in flight the client's CPU per call follows how many answers each wake-up
        // brings (the server's pace); the server's, kept busy by the same calls, does not.
        (_, false) => (false, true),
        (_, true) => (true, false),
    }
}

/// How many times one repetition is measured again at once when something disturbed it (a cell
/// measures again at most as many repetitions as it has).
pub const RERUNS_PER_REPETITION: usize = 2;

/// Whether a disturbed repetition is measured again: at most [`RERUNS_PER_REPETITION`] times
/// each, and at most as many times in all as the cell has repetitions.
pub fn may_rerun(this_repetition: usize, cell_reruns: u32, repetitions: usize) -> bool {
    this_repetition < RERUNS_PER_REPETITION && (cell_reruns as usize) < repetitions
}

/// How many times a slow repetition is measured again after the rounds.
pub const SLOW_ATTEMPTS_PER_REPETITION: u32 = 2;

/// The slow repetitions of a cell, the slowest first, with the reason of each; `(client, server)`:
/// the sides whose CPU per call is judged (those doing the same work for every call).
pub fn slow_runs(runs: &[RunMetrics], (client, server): (bool, bool)) -> Vec<(usize, String)> {
    let client_cpu: Vec<f64> = runs.iter().map(|r| r.client_cpu_us_per_call).collect();
    let server_cpu: Vec<f64> = runs.iter().map(|r| r.server_cpu_us_per_call.unwrap_or(f64::NAN)).collect();
    let mut slow = Vec::new();
    if client {
        slow.extend(interference::slow_runs("client", &client_cpu));
    }
    if server {
        slow.extend(interference::slow_runs("server", &server_cpu));
    }
    slow.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut seen = std::collections::BTreeSet::new();
    slow.into_iter().filter(|(run, _, _)| seen.insert(*run)).map(|(run, _, why)| (run, why)).collect()
}

/// True when `m`, a repetition measured again, is slow against the medians of the sides judged
/// over `runs` (the cell's measurements as they stand): it then replaces none of them.
pub fn slow_against(m: &RunMetrics, runs: &[RunMetrics], sides: (bool, bool)) -> bool {
    still_slow(m, medians(runs, sides))
}

/// True when `m` is slow against the medians of the cell's first measurements.
fn still_slow(m: &RunMetrics, medians: (Option<f64>, Option<f64>)) -> bool {
    let above = |v: Option<f64>, median: Option<f64>| match (v, median) {
        (Some(v), Some(median)) => v > median * (1.0 + SLOW_LIMIT),
        _ => false,
    };
    above(Some(m.client_cpu_us_per_call), medians.0) || above(m.server_cpu_us_per_call, medians.1)
}

/// The repetitions of a cell to measure again, in order: the slow ones (slowest first, judged
/// among those in the experiment's usual placement of the CPUs: the other placement's are slower
/// or faster as a whole), then those outside that placement; each once, with why.
fn to_measure_again(runs: &[RunMetrics], sides: (bool, bool), gate: Option<&Gate>) -> Vec<(usize, String)> {
    let Some(gate) = gate else { return slow_runs(runs, sides) };
    let usual: Vec<usize> = (0..runs.len()).filter(|i| gate.usual(&runs[*i])).collect();
    let placed: Vec<RunMetrics> = usual.iter().map(|i| runs[*i].clone()).collect();
    let mut again: Vec<(usize, String)> =
        slow_runs(&placed, sides).into_iter().map(|(i, why)| (usual[i], why)).collect();
    again.extend(runs.iter().enumerate().filter_map(|(run, m)| Some((run, gate.outside(m)?))));
    again
}

/// The runs of `runs` a measurement again is judged against: those in the usual placement.
fn judged_against(runs: &[RunMetrics], gate: Option<&Gate>) -> Vec<RunMetrics> {
    runs.iter().filter(|r| gate.is_none_or(|g| g.usual(r))).cloned().collect()
}

pub(crate) async fn measure_again(
    experiment: &str,
    cells: &[PlannedCell],
    histograms: &mut Histograms,
    rig: &mut Rig<'_>,
    results: &mut Results,
    store: &Store,
    progress: &mut Progress,
) -> Result<(), RunError> {
    let o = rig.o;
    // Repetitions of cells over loopback are held to their experiment's usual placement of the
    // CPUs (see `Gate::new`): where the CPUs are now is part of choosing it.
    let held_runs: Vec<&RunMetrics> =
        cells.iter().filter(|c| held(&c.plan)).flat_map(|c| &results.cells[c.index].runs).collect();
    let now = match (o.client_cpus.first(), o.server_cpus.first()) {
        (Some(&c), Some(&s)) if !held_runs.is_empty() => callbench_machine::cache_distance::round_trip_ns(c, s),
        _ => None,
    };
    let all = results.cells.iter().flat_map(|c| &c.runs);
    let mut gate = Gate::new(all, held_runs, now, &o.client_cpus, &o.server_cpus);
    // The time left counts one measurement per repetition to measure again (a second is the exception).
    for PlannedCell { plan: p, index, .. } in cells {
        let g = gate.as_ref().filter(|_| held(p));
        progress.expect(&p.id, to_measure_again(&results.cells[*index].runs, fixed_work_sides(p), g).len());
    }
    for c in cells {
        let PlannedCell { plan: p, index, .. } = c;
        let sides = fixed_work_sides(p);
        let placed = held(p);
        if to_measure_again(&results.cells[*index].runs, sides, gate.as_ref().filter(|_| placed)).is_empty() {
            continue;
        }
        // As many measurements again as the cell has repetitions, two per repetition at most: spells
        // can take much of a minute, so one pass over a third of the runs leaves slow ones behind
        // (bench/results/code-notes-2026-12.md#slow-spells-within-a-minute). Each is judged against
        // the medians of the runs as they stand, which fall towards the machine's full speed as slow
        // runs are replaced.
        let budget = results.cells[*index].runs.len();
        let mut attempts = vec![0u32; budget];
        for _ in 0..budget {
            let runs = &results.cells[*index].runs;
            let g = gate.as_ref().filter(|_| placed);
            let Some((run, why)) = to_measure_again(runs, sides, g)
                .into_iter()
                .find(|(run, _)| attempts[*run] < SLOW_ATTEMPTS_PER_REPETITION)
            else {
                break;
            };
            if o.cancel.load(Ordering::Relaxed) || results.cells[*index].status != CellStatus::Ok {
                return Ok(());
            }
            if let Some(line) = rig.again.refusal(experiment) {
                progress.show(&line, true);
            }
            if !rig.again.allows() {
                break;
            }
            let medians = medians(&judged_against(runs, g), sides);
            // The budget counts the wait for the placement as well as the measurement.
            let began = Instant::now();
            // Measured in the other placement, it would be outside again: wait for the usual one.
            if let Some(g) = gate.as_mut().filter(|_| placed) {
                progress.show(
                    &format!("{experiment}: waiting for the CPUs' usual placement to measure {} again", p.id),
                    false,
                );
                if !g.wait(&o.cancel, rig.again.left()).await {
                    rig.again.spend(began.elapsed());
                    break;
                }
            }
            attempts[run] += 1;
            progress.show(&format!("{experiment}: measuring a repetition of {} again ({why})", p.id), true);
            let started = Instant::now();
            let outcome = repetition::measure(rig, c, results).await;
            progress.done(&p.id, started.elapsed());
            rig.again.spend(began.elapsed());
            let cell = &mut results.cells[*index];
            cell.reruns += 1;
            let Ok(m) = outcome else { continue };
            let outside = gate.as_ref().is_some_and(|g| placed && !g.usual(&m.metrics));
            if m.cancelled
                || m.metrics.calls_errors > 0
                || still_slow(&m.metrics, medians)
                || m.metrics.disturbed.is_some()
                || outside
            {
                continue;
            }
            cell.runs[run] = m.metrics;
            if let Some(h) = histograms.get_mut(index).and_then(|h| h.get_mut(run)) {
                *h = (m.histogram, m.window);
            }
        }
        progress.expect(&p.id, 0);
        // What is still slow, or still placed otherwise, after that was measured on a slower (or
        // another) machine: said so beside it.
        let cell = &mut results.cells[*index];
        for (run, why) in to_measure_again(&cell.runs, sides, gate.as_ref().filter(|_| placed)) {
            cell.runs[run].disturbed.get_or_insert(why);
        }
        finish_cell(results, *index, histograms.get(index).map(|v| &v[..]).unwrap_or(&[]), store, o);
        store.write_results(results)?;
    }
    Ok(())
}

/// The medians of the sides' CPU per call (client, server) over `runs`, for the sides judged.
fn medians(runs: &[RunMetrics], (client, server): (bool, bool)) -> (Option<f64>, Option<f64>) {
    let client_cpu: Vec<f64> = runs.iter().map(|r| r.client_cpu_us_per_call).collect();
    let server_cpu: Vec<f64> = runs.iter().filter_map(|r| r.server_cpu_us_per_call).collect();
    (
        client.then(|| interference::median_of(&client_cpu)).flatten(),
        server.then(|| interference::median_of(&server_cpu)).flatten(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disturbed_repetition_is_measured_again_twice_at_most_and_no_more_than_the_cell_has() {
        assert!(may_rerun(0, 0, 5) && may_rerun(1, 3, 5));
        assert!(!may_rerun(2, 0, 5), "twice per repetition");
        assert!(!may_rerun(0, 5, 5), "as many in all as the cell has repetitions");
    }

    fn run(client: f64, server: Option<f64>) -> RunMetrics {
        RunMetrics { client_cpu_us_per_call: client, server_cpu_us_per_call: server, ..Default::default() }
    }

    #[test]
    fn the_most_slowed_repetitions_come_first_once_each_from_the_sides_doing_fixed_work() {
        let runs: Vec<RunMetrics> = [
            (9.5, 16.2),
            (9.1, 16.6),
            (8.7, 19.4),
            (9.7, 22.9),
            (8.6, 16.2),
            (9.6, 16.1),
            (12.6, 17.7),
            (9.0, 16.3),
            (10.1, 23.6),
        ]
        .iter()
        .map(|&(c, s)| run(c, Some(s)))
        .collect();
        let both = slow_runs(&runs, (true, true));
        assert_eq!(both.iter().map(|s| s.0).collect::<Vec<_>>(), vec![8, 3, 6, 2]);
        assert!(both[0].1.starts_with("the server's CPU per call was 42% above"), "{}", both[0].1);
        let server_only = slow_runs(&runs, (false, true));
        assert_eq!(server_only.iter().map(|s| s.0).collect::<Vec<_>>(), vec![8, 3, 2]);
        assert!(slow_runs(&runs, (false, false)).is_empty());
        // The medians of the first measurements judge a repetition measured again.
        assert!(still_slow(&run(9.0, Some(19.0)), (Some(9.5), Some(16.3))));
        assert!(!still_slow(&run(10.0, Some(17.0)), (Some(9.5), Some(16.3))));
        assert!(!still_slow(&run(10.0, None), (None, Some(16.3))), "no server figure: nothing to judge");
    }

    #[test]
    fn outside_the_usual_placement_is_measured_again_and_slowness_is_judged_within_it() {
        // Five near repetitions (one slow among them) and four far ones, 25% slower as a whole.
        let placed =
            |client: f64, trip: f64| RunMetrics { cpus_round_trip_ns: Some([trip, trip]), ..run(client, None) };
        let runs: Vec<RunMetrics> = [(10.0, 65.0), (10.1, 66.0), (13.0, 64.0), (9.9, 65.0), (10.0, 67.0)]
            .into_iter()
            .chain([(12.5, 220.0), (12.6, 215.0), (12.4, 230.0), (12.5, 210.0)])
            .map(|(c, t)| placed(c, t))
            .collect();
        let gate = Gate::new(&runs, &runs, None, &[0], &[1]).expect("two placements");
        let again = to_measure_again(&runs, (true, false), Some(&gate));
        assert_eq!(again.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2, 5, 6, 7, 8]);
        assert!(again[0].1.starts_with("the client's CPU per call was 30% above"), "{}", again[0].1);
        assert!(again[1].1.contains("CPUs were 220 ns apart"), "{}", again[1].1);
        assert_eq!(judged_against(&runs, Some(&gate)).len(), 5);
        // Without a placement to hold to, the median falls between the two: none reads as slow.
        assert!(to_measure_again(&runs, (true, false), None).is_empty());
    }

    #[test]
    fn sequential_calls_are_fixed_work_except_across_a_link() {
        let suite = |extra: &str| {
            crate::suite::Suite::parse(&format!(
                "name='x'\n[[experiment]]\nid='a'\ntitle='t'\nservers=['rust-actix']\nworkloads=['auth']\n\
                 concurrency=1\n{extra}"
            ))
            .unwrap()
        };
        let sides = |s: &crate::suite::Suite| fixed_work_sides(&crate::plan::cells(s, &s.experiments[0]).unwrap()[0]);
        assert_eq!(sides(&suite("")), (true, true));
        assert_eq!(sides(&suite("network = { rtt = '14ms' }")), (false, false));
        let python = |servers: &str| {
            let s = crate::suite::Suite::parse(&format!(
                "name='x'\n[[experiment]]\nid='p'\nkind='python'\ntitle='t'\nservers=[{servers}]\nworkloads=['noop']"
            ))
            .unwrap();
            fixed_work_sides(&crate::plan::cells(&s, &s.experiments[0]).unwrap()[0])
        };
        assert_eq!(python("'pyo3'"), (true, false), "in-process: the caller alone");
        assert_eq!(python("'requests+rust-axum'"), (true, true));
    }
}
