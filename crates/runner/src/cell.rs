//! A cell of an experiment: its record before the first repetition, and its summary, spectrum
//! and histograms after each (its repetitions are measured in repetition.rs).

use crate::options::Options;
use crate::plan::CellPlan;
use crate::store::Store;
use callbench_results::analysis;
use callbench_results::model::{Cell, CellStatus, Results};
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
    analysis::summarise(cell, &headline, floor, o.client_cpus.len(), server_cpus);
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
}
