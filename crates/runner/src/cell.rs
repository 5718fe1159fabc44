//! A cell of an experiment: its record before the first repetition, and its summary, spectrum
//! and histograms after each (its repetitions are measured in repetition.rs).

use crate::options::Options;
use crate::plan::CellPlan;
use crate::store::Store;
use callbench_results::analysis;
use callbench_results::model::{Cell, CellStatus, Estimate, Results};
use callbench_results::pooled::{Repetitions, RESAMPLES};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::time::Duration;

/// A cell of the experiment being run: its plan, its place in `results.cells`, its resolved rate.
pub struct PlannedCell {
    pub plan: CellPlan,
    pub index: usize,
    /// Calls/s for an open-loop cell (`rate = "50% of closed-50"` resolved).
    pub rate: Option<f64>,
}

/// A cell before its first repetition.
pub fn new_cell(p: &CellPlan, rate: Option<f64>) -> Cell {
    let transport = if p.server.is_inproc() {
        "inproc".to_string()
    } else if p.server.http2 {
        "rest-h2".to_string()
    } else if p.server.http3 {
        "rest-h3".to_string()
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
        pooled: vec![],
        bottleneck: String::new(),
        noisy: false,
        disturbed: None,
        reruns: 0,
        hdr_file: None,
        network: None,
        thresholds: Vec::new(),
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
    let pooled = pooled_percentiles(cell, hists);
    analysis::summarise_with(cell, &headline, floor, o.client_cpus.len(), server_cpus, &pooled);
    cell.disturbed = callbench_machine::interference::disturbed_note(&cell.runs);
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

/// The latency percentiles of an open-loop cell, read from all its repetitions' calls merged with
/// a bootstrap interval over repetitions (see callbench_results::pooled): a paced cell's headline
/// is its tail, which one short repetition rests on too few calls for. Empty for a closed-loop
/// cell, and when a kept repetition left no histogram.
fn pooled_percentiles(cell: &Cell, hists: &[(Histogram<u64>, Duration)]) -> BTreeMap<String, Estimate> {
    const PERCENTILES: [(&str, f64); 4] =
        [("latency_p50_us", 0.5), ("latency_p90_us", 0.9), ("latency_p99_us", 0.99), ("latency_p99.9_us", 0.999)];
    let open_loop = cell.runs.iter().any(|r| r.rate_requested.is_some());
    if !open_loop || hists.len() != cell.runs.len() {
        return BTreeMap::new();
    }
    let recorded: Vec<Vec<(f64, u64)>> = hists.iter().map(|(h, _)| recorded(h)).collect();
    let Some(reps) = Repetitions::new(&recorded) else { return BTreeMap::new() };
    let qs: Vec<f64> = PERCENTILES.iter().map(|&(_, q)| q).collect();
    // One fixed seed: the same histograms give the same interval on every machine.
    let estimates = reps.estimates(&qs, RESAMPLES, 0x9e37_79b9);
    PERCENTILES.iter().map(|&(name, _)| name.to_string()).zip(estimates).collect()
}

/// A histogram's (value, count) pairs, each value the highest its bucket stands for, as
/// `value_at_quantile` reads it.
fn recorded(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    h.iter_recorded().map(|v| (v.value_iterated_to() as f64, v.count_at_value())).collect()
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

    #[test]
    fn the_pooled_percentile_is_the_merged_histograms_own() {
        let mut rng = callbench_primitives::rng::Rng::new(3);
        let hists: Vec<Histogram<u64>> = (0..5)
            .map(|_| {
                let mut h = Histogram::<u64>::new_with_max(3_600_000_000, 3).unwrap();
                for _ in 0..20_000 {
                    h.record(40 + (rng.next_exp() * 900.0) as u64).unwrap();
                }
                h
            })
            .collect();
        let mut merged = hists[0].clone();
        for h in &hists[1..] {
            merged.add(h).unwrap();
        }
        let reps = Repetitions::new(&hists.iter().map(recorded).collect::<Vec<_>>()).unwrap();
        let qs = [0.5, 0.9, 0.99, 0.999];
        let pooled: Vec<f64> = reps.estimates(&qs, 0, 1).iter().map(|e| e.median).collect();
        let direct: Vec<f64> = qs.iter().map(|&q| merged.value_at_quantile(q) as f64).collect();
        assert_eq!(pooled, direct);
    }
}
