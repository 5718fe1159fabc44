//! An experiment's comparisons in words. The verdict rules: when the two cells' intervals overlap
//! the reading is "no significant difference" and nothing is ranked.

use super::Block;
use crate::format;
use crate::model::{Comparison, Experiment, Results};
use crate::names;

pub const NO_DIFFERENCE: &str = "no significant difference";

pub fn experiment(r: &Results, exp: &Experiment) -> Vec<Block> {
    let mut comparisons: Vec<&Comparison> = r.comparisons.iter().filter(|c| c.experiment == exp.id).collect();
    // In the order of the table's rows (the list comes grouped by a text key: 10,000 before 2,000).
    let row = |id: &str| r.cells.iter().position(|c| c.id == id).unwrap_or(usize::MAX);
    comparisons.sort_by_key(|c| (row(&c.a), row(&c.b)));
    let items: Vec<String> = comparisons.into_iter().map(|c| sentence(r, c)).collect();
    if items.is_empty() {
        return vec![];
    }
    vec![
        Block::Subheading(format!("Comparisons: {}", exp.title)),
        Block::Paragraph(
            "a vs b: the ratio of their medians a / b with its 95% bootstrap interval, then the verdict from the two cells' own intervals.".into(),
        ),
        Block::List(items),
    ]
}

/// `rust-tonic vs rust-actix, auth, server CPU per call: 0.62× [0.58 – 0.66] — b higher: rust-tonic
/// needs 0.62× the server CPU per call of rust-actix.`
pub fn sentence(r: &Results, c: &Comparison) -> String {
    let (a_cell, b_cell) = (r.cell(&c.a), r.cell(&c.b));
    let a = a_cell.map_or(c.a.clone(), |cell| names::series(r, cell));
    let b = b_cell.map_or(c.b.clone(), |cell| names::series(r, cell));
    let context = a_cell.map(|cell| names::cell_context(r.experiment(&c.experiment), cell));
    let metric = names::metric_label(&c.metric);
    let head = match context {
        Some(context) => format!("{a} vs {b}, {context}, {metric}"),
        None => format!("{a} vs {b}, {metric}"),
    };
    let mut text = format!("{head}: {} — {}", format::ratio(&c.ratio), c.verdict);
    if c.verdict != NO_DIFFERENCE {
        text.push_str(&format!(": {}", reading(&c.metric, &a, &b, c.ratio.median)));
    }
    text.push('.');
    let noisy: Vec<&str> = [(a_cell, &a), (b_cell, &b)]
        .into_iter()
        .filter(|(cell, _)| cell.is_some_and(|c| c.noisy))
        .map(|(_, name)| name.as_str())
        .collect();
    if !noisy.is_empty() {
        text.push_str(&format!(" Noisy: {} (repetitions spread widely, read with care).", noisy.join(", ")));
    }
    text
}

/// The ratio in plain words, phrased for the kind of metric.
pub fn reading(metric: &str, a: &str, b: &str, ratio: f64) -> String {
    let times = format::ratio_value(ratio);
    let label = names::metric_label(metric);
    if metric.ends_with("_cpu_us_per_call") {
        format!("{a} needs {times} the {label} of {b}")
    } else if matches!(metric, "throughput_per_s" | "rate_achieved") {
        format!("{a} serves {times} the calls per second of {b}")
    } else {
        format!("{a}'s {label} is {times} that of {b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_by_kind_of_metric() {
        assert_eq!(
            reading("server_cpu_us_per_call", "rust-tonic", "rust-actix", 0.62),
            "rust-tonic needs 0.62× the server CPU per call of rust-actix"
        );
        assert_eq!(reading("throughput_per_s", "a", "b", 1.8), "a serves 1.80× the calls per second of b");
        assert_eq!(reading("latency_p50_us", "a", "b", 0.5), "a's p50 latency is 0.50× that of b");
    }
}
