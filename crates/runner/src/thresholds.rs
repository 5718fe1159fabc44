//! Pass/fail conditions on a run's cells for CI (`callbench run --threshold 'p99<200ms'`, an
//! experiment's `thresholds`): each judged on the cell's median over its repetitions (errors over
//! all of them), kept in the cell, and a crossed one makes the run exit 99.

use crate::RunError;
use callbench_load::threshold::{self, Metric, Threshold};
use callbench_results::model::{Cell, Results, ThresholdRecord};

/// The latency quantiles a run keeps per repetition (`latency_pNN_us`).
const KEPT: [(&str, f64); 4] =
    [("latency_p50_us", 0.5), ("latency_p90_us", 0.9), ("latency_p99_us", 0.99), ("latency_p99.9_us", 0.999)];

/// `text` as a condition a run can judge; the error is one line.
pub fn parse(text: &str) -> Result<Threshold, RunError> {
    let t = threshold::parse(text).map_err(|e| RunError::Settings(e.into()))?;
    if let Metric::Quantile(q) = t.metric {
        if quantile_key(q).is_none() {
            return Err(RunError::Settings(format!(
                "threshold {text:?}: a run keeps p50, p90, p99 and p99.9 of each repetition"
            )));
        }
    }
    Ok(t)
}

fn quantile_key(q: f64) -> Option<&'static str> {
    KEPT.iter().find(|(_, k)| (k - q).abs() < 1e-9).map(|(key, _)| *key)
}

/// Judges every cell on its experiment's thresholds (`own`, by experiment id), then on `given`
/// (the command line's).
pub fn judge<'a>(results: &mut Results, own: impl Fn(&str) -> &'a [String], given: &[Threshold]) {
    for cell in &mut results.cells {
        let own: Vec<Threshold> = own(&cell.experiment).iter().filter_map(|text| parse(text).ok()).collect();
        cell.thresholds = own
            .iter()
            .chain(given)
            .map(|t| {
                let j = t.judge_value(measured(cell, t.metric));
                ThresholdRecord {
                    threshold: j.threshold,
                    measured: j.measured,
                    measured_text: j.measured_text,
                    met: j.met,
                }
            })
            .collect();
    }
}

/// The cell's value of `metric`, or why it has none.
fn measured(cell: &Cell, metric: Metric) -> Result<f64, String> {
    if cell.runs.is_empty() {
        return Err("not measured".into());
    }
    let median = |key: &str| cell.summary.get(key).map(|e| e.median).ok_or_else(|| "not measured".to_string());
    let calls: u64 = cell.runs.iter().map(|r| r.calls_ok + r.calls_errors).sum();
    let errors: u64 = cell.runs.iter().map(|r| r.calls_errors).sum();
    match metric {
        Metric::Quantile(q) => median(quantile_key(q).ok_or("not kept by a run")?),
        Metric::Mean => median("latency_mean_us"),
        Metric::Max => {
            let max = cell
                .runs
                .iter()
                .filter_map(|r| r.latency_us.as_ref().map(|l| l.max))
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            max.ok_or_else(|| "no successful call".into())
        }
        Metric::ErrorShare if calls > 0 => Ok(errors as f64 / calls as f64),
        Metric::ErrorCount if calls > 0 => Ok(errors as f64),
        Metric::ErrorShare | Metric::ErrorCount => Err("no call".into()),
        Metric::CallsPerS => median("throughput_per_s"),
    }
}

/// `closed-50/call/rest: p99<200ms crossed (312ms)` for every crossed threshold of the run.
pub fn crossed(results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    for cell in &results.cells {
        for t in cell.thresholds.iter().filter(|t| !t.met) {
            out.push(format!("{}: {} crossed ({})", cell.id, t.threshold, t.measured_text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_results::model::{Estimate, Latency, RunMetrics};

    fn cell() -> Cell {
        let run = |errors: u64, max: f64| RunMetrics {
            calls_ok: 99,
            calls_errors: errors,
            latency_us: Some(Latency { p50: 10.0, p90: 20.0, p99: 30.0, p99_9: 40.0, max, mean: 12.0 }),
            ..Default::default()
        };
        let estimate = |median: f64| Estimate { median, lo: median, hi: median, n: 2 };
        let summary = [("latency_p99_us", 30.0), ("latency_mean_us", 12.0), ("throughput_per_s", 5000.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), estimate(v)))
            .collect();
        serde_json::from_value::<Cell>(serde_json::json!({
            "id": "e/w/s", "experiment": "e", "server": "s", "workload": "w", "transport": "rest-h1",
            "params": {}, "x": null, "status": "ok", "error": null, "runs": [], "summary": {}, "spectrum": [],
            "bottleneck": "", "noisy": false, "hdr_file": null
        }))
        .map(|mut c| {
            c.runs = vec![run(1, 50.0), run(0, 70.0)];
            c.summary = summary;
            c
        })
        .unwrap()
    }

    #[test]
    fn a_cell_is_judged_on_its_medians_and_its_errors_over_every_repetition() {
        let c = cell();
        let judge = |text: &str| {
            let t = parse(text).unwrap();
            t.judge_value(measured(&c, t.metric))
        };
        assert!(judge("p99<31us").met && !judge("p99<30us").met);
        assert!(judge("mean<=12us").met);
        assert_eq!(judge("max<1ms").measured, Some(70.0));
        assert!(judge("errors<=1").met && !judge("errors<1").met);
        assert_eq!(judge("errors<1%").measured_text, "0.5025%");
        assert!(judge("calls_per_s>4k").met);
        assert!(parse("p75<1ms").unwrap_err().to_string().contains("p50, p90, p99 and p99.9"));
        let mut empty = c.clone();
        empty.runs.clear();
        let t = parse("p99<1s").unwrap();
        assert_eq!(t.judge_value(measured(&empty, t.metric)).measured_text, "not measured");
    }
}
