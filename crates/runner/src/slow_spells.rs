//! After an experiment's rounds: the repetitions at one call in flight that ran in a slow spell of
//! the machine (their client CPU per call, fixed work there, rose above the cell's median; see
//! `interference::slow_client_runs`) are measured again, once each, and replaced when the new one
//! is not slow too. Other processes on the CPUs are caught per repetition (`disturbed`); these
//! spells showed no other process and no steal, so only the client's own work reveals them.

use crate::cell::{finish_cell, measure_once, PlannedCell};
use crate::fleet::Fleet;
use crate::interference::{self, SLOW_CLIENT_LIMIT};
use crate::options::Options;
use crate::plan::{CellKind, CellPlan};
use crate::progress::Progress;
use crate::store::Store;
use callbench_report::model::{CellStatus, Results};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub type Histograms = BTreeMap<usize, Vec<(Histogram<u64>, Duration)>>;

/// Cells whose client does the same work for every call: one call in flight, closed loop.
fn fixed_client_work(p: &CellPlan) -> bool {
    p.kind == CellKind::Load && p.fields.concurrency.unwrap_or(1) == 1 && p.fields.rate.is_none()
}

#[allow(clippy::too_many_arguments)]
pub async fn measure_again(
    experiment: &str,
    cells: &[PlannedCell],
    histograms: &mut Histograms,
    fleet: &mut Fleet<'_>,
    results: &mut Results,
    store: &Store,
    o: &Options,
    progress: &mut Progress,
) -> Result<(), String> {
    for PlannedCell { plan: p, index, rate } in cells.iter().filter(|c| fixed_client_work(&c.plan)) {
        let cpu: Vec<f64> = results.cells[*index].runs.iter().map(|r| r.client_cpu_us_per_call).collect();
        let slow = interference::slow_client_runs(&cpu);
        // At most a third of a cell's repetitions: a cell slow throughout is what it is.
        for (run, why) in slow.into_iter().take(cpu.len() / 3) {
            if o.cancel.load(Ordering::Relaxed) || results.cells[*index].status != CellStatus::Ok {
                return Ok(());
            }
            progress.show(&format!("{experiment}: measuring a repetition of {} again ({why})", p.id), true);
            let started = Instant::now();
            let outcome = measure_once(p, *rate, fleet, results, o).await;
            progress.done(&p.id, started.elapsed());
            let cell = &mut results.cells[*index];
            cell.reruns += 1;
            let Ok(m) = outcome else { continue };
            let median = median(&cpu);
            let still_slow = m.metrics.client_cpu_us_per_call > median * (1.0 + SLOW_CLIENT_LIMIT);
            if m.cancelled || m.metrics.calls_errors > 0 || still_slow || m.metrics.disturbed.is_some() {
                cell.runs[run].disturbed.get_or_insert(why);
                continue;
            }
            cell.runs[run] = m.metrics;
            if let Some(h) = histograms.get_mut(index).and_then(|h| h.get_mut(run)) {
                *h = (m.histogram, m.window);
            }
        }
        finish_cell(results, *index, histograms.get(index).map(|v| &v[..]).unwrap_or(&[]), store, o);
        store.write_results(results)?;
    }
    Ok(())
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
