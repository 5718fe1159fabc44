//! From runs to answers: a cell's summary (median and interval per metric), which side was the
//! bottleneck, and the comparisons between the servers of an experiment.

use crate::model::{Cell, CellStatus, Comparison, Estimate, Results, METRICS};
use crate::stats;
use std::collections::BTreeMap;

/// The verdict of a comparison whose interval holds 1.
pub const NO_DIFFERENCE: &str = "no significant difference";
/// The verdict when too few repetitions give no 95% interval (3 against 3).
pub const TOO_FEW: &str = "too few repetitions to tell";
/// The verdict of two exact counts within the 0.5% a printed ratio (1.00×) resolves.
pub const EQUAL: &str = "equal";

/// A side busier than this share of its CPUs is called the bottleneck.
pub const BUSY: f64 = 0.90;

/// Fills `summary`, `noisy` and `bottleneck` from the cell's runs. Intervals are widened to at
/// least ±`floor` of the median (see `SuiteRecord::interval_floor`); `noisy` looks at the runs'
/// own spread. `client_cpus` and `server_cpus` are the numbers of CPUs each side was pinned to.
pub fn summarise(cell: &mut Cell, headline: &str, floor: f64, client_cpus: usize, server_cpus: usize) {
    summarise_with(cell, headline, floor, client_cpus, server_cpus, &BTreeMap::new());
}

/// [`summarise`], with `pooled`'s estimates in place of the repetitions' medians for the metrics
/// it holds (an open-loop cell's percentiles of all calls merged: [`crate::pooled`]); the cell
/// records which metrics those are.
pub fn summarise_with(
    cell: &mut Cell,
    headline: &str,
    floor: f64,
    client_cpus: usize,
    server_cpus: usize,
    pooled: &BTreeMap<String, Estimate>,
) {
    cell.summary.clear();
    cell.pooled = pooled.keys().cloned().collect();
    let mut noisy = false;
    for (name, _, _) in METRICS {
        let values: Vec<f64> = cell.runs.iter().filter_map(|r| r.metric(name)).collect();
        if let Some(e) = pooled.get(*name).copied().or_else(|| stats::estimate(&values)) {
            let exact = crate::model::is_exact_count(name);
            // Figures of a microsecond or less are at the clock's resolution: their spread says
            // nothing; nor does a count's (what was counted is no timing).
            let judged = *name == "throughput_per_s" || *name == headline;
            if judged && !exact && e.median.abs() > 1.0 && stats::is_noisy(&e) {
                noisy = true;
            }
            // The floor is a timing's systematic spread; a count is what was counted.
            let floor = if exact { 0.0 } else { floor };
            cell.summary.insert(name.to_string(), stats::widen(e, floor));
        }
    }
    cell.noisy = cell.runs.len() > 1 && noisy;
    let median = |m: &str| cell.summary.get(m).map(|e| e.median);
    // In open loop the client spins to start calls on time, so its CPU says nothing about
    // saturation; a client that cannot keep the rate (achieved < 99% of requested) is the limit.
    let client_used = match (median("rate_achieved"), cell.runs.iter().find_map(|r| r.rate_requested)) {
        (Some(achieved), Some(requested)) if requested > 0.0 => {
            Some(if achieved < 0.99 * requested { client_cpus as f64 } else { 0.0 })
        }
        _ => median("client_cpu_cores"),
    };
    cell.bottleneck = bottleneck(client_used, client_cpus, median("server_cpu_cores"), server_cpus);
    // The emulated link's forwarder shares the client's CPUs: when it saturated its core, the
    // link, not the client's calls, was the limit.
    if median("link_forwarder_cores").is_some_and(|busy| busy >= BUSY) {
        cell.bottleneck = "link".into();
    }
}

/// `server`, `client`, `both` or `neither` from the CPU each side used (in cores).
pub fn bottleneck(client: Option<f64>, client_cpus: usize, server: Option<f64>, server_cpus: usize) -> String {
    let busy = |used: Option<f64>, cpus: usize| used.is_some_and(|u| cpus > 0 && u >= BUSY * cpus as f64);
    match (busy(client, client_cpus), busy(server, server_cpus)) {
        (true, true) => "both",
        (true, false) => "client",
        (false, true) => "server",
        (false, false) => "neither",
    }
    .into()
}

/// The metrics compared between servers in every experiment, beside its headline.
const COMPARED: &[&str] = &["server_cpu_us_per_call", "wire_received_per_call"];

/// Ratios between every pair of cells of `experiment` that differ only by server/transport
/// (same workload, same swept value), for the headline metric and the CPU per call; when the
/// sweep is of a category (`mode`, `gzip`), also between its values for the same server.
pub fn compare_experiment(results: &Results, experiment: &str) -> Vec<Comparison> {
    let Some(exp) = results.experiment(experiment) else { return vec![] };
    let measured: Vec<&Cell> = results
        .cells
        .iter()
        .filter(|c| c.experiment == experiment && !c.runs.is_empty() && measured_fully(c))
        .collect();
    let mut groups: BTreeMap<String, Vec<&Cell>> = BTreeMap::new();
    for cell in &measured {
        groups
            .entry(group_key(cell, &["server", "target", "client", "approximated", "transport", "http2", "http3"]))
            .or_default()
            .push(cell);
    }
    if let Some(param) = exp.sweep.as_deref().filter(|_| measured.iter().all(|c| c.x.is_none())) {
        for cell in &measured {
            let key = format!("{}|{}|{}", cell.server, cell.transport, group_key(cell, &[param]));
            groups.entry(key).or_default().push(cell);
        }
    }
    let mut metrics = vec![exp.headline.as_str()];
    metrics.extend(COMPARED.iter().filter(|m| **m != exp.headline));
    let mut out = Vec::new();
    for cells in groups.values() {
        for (i, a) in cells.iter().enumerate() {
            for b in &cells[i + 1..] {
                for metric in &metrics {
                    if let Some(c) = compare_cells(experiment, metric, a, b) {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Cells with the same key answer the same question; `varying` are the parameters they may differ by.
fn group_key(cell: &Cell, varying: &[&str]) -> String {
    let mut params = cell.params.clone();
    for v in varying {
        params.remove(*v);
    }
    let x = if varying.iter().any(|v| cell.params.contains_key(*v) && cell.x.is_none()) { None } else { cell.x };
    format!("{}|{:?}|{}", cell.workload, x, serde_json::to_string(&params).unwrap_or_default())
}

/// Cells a comparison may rest on: all repetitions ran on one live server.
pub fn measured_fully(c: &Cell) -> bool {
    matches!(c.status, CellStatus::Ok | CellStatus::Partial)
}

/// `a / b` for one metric, with the verdict (None when either side lacks it or is zero, e.g. the
/// wire bytes of an in-process call). Timings: the rank ratio and its interval
/// ([`stats::rank_ratio`]), the verdict read from that interval. Exact counts: the ratio of the
/// medians, no interval, the verdict from the numbers themselves.
pub fn compare_cells(experiment: &str, metric: &str, a: &Cell, b: &Cell) -> Option<Comparison> {
    let values = |c: &Cell| c.runs.iter().filter_map(|r| r.metric(metric)).collect::<Vec<f64>>();
    let (ea, eb) = (a.summary.get(metric)?, b.summary.get(metric)?);
    if ea.median == 0.0 || eb.median == 0.0 {
        return None;
    }
    let (ratio, verdict, exact, coverage) = if crate::model::is_exact_count(metric) {
        let r = ea.median / eb.median;
        (Estimate { median: r, lo: r, hi: r, n: ea.n.min(eb.n) }, exact_verdict(ea.median, eb.median), true, None)
    } else {
        let r = stats::rank_ratio(&values(a), &values(b))?;
        (r.estimate, verdict(&r).into(), false, Some(r.coverage))
    };
    Some(Comparison {
        experiment: experiment.into(),
        metric: metric.into(),
        a: a.id.clone(),
        b: b.id.clone(),
        ratio,
        verdict,
        exact,
        coverage,
    })
}

/// What a rank ratio says: `a higher`, `b higher`, `no significant difference` (its interval
/// holds 1), or `too few repetitions to tell` (no interval can reach 95%).
pub fn verdict(r: &stats::RankRatio) -> &'static str {
    if !r.decidable {
        TOO_FEW
    } else if !r.significant() {
        NO_DIFFERENCE
    } else if r.estimate.lo > 1.0 {
        "a higher"
    } else {
        "b higher"
    }
}

/// Counts differ or they do not: `equal` (within the 0.5% the printed ratio, 1.00×, resolves),
/// `a higher`, `b higher`.
pub fn exact_verdict(a: f64, b: f64) -> String {
    if (a - b).abs() < 0.005 * b.abs() {
        EQUAL.into()
    } else if a > b {
        "a higher".into()
    } else {
        "b higher".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_side_is_the_bottleneck() {
        assert_eq!(bottleneck(Some(0.97), 1, Some(0.40), 1), "client");
        assert_eq!(bottleneck(Some(0.30), 1, Some(0.99), 1), "server");
        assert_eq!(bottleneck(Some(0.30), 1, Some(0.99), 2), "neither");
        assert_eq!(bottleneck(Some(0.95), 1, Some(0.95), 1), "both");
        assert_eq!(bottleneck(Some(0.2), 1, None, 1), "neither");
    }
}
