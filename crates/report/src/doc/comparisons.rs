//! An experiment's comparisons in words. One rule for every verdict: the ratio's own rank-test
//! interval (`stats::rank_ratio`); when it holds 1 the reading is "no significant difference" and
//! nothing is ranked. Exact counts are compared as numbers, with no interval.

use super::blocks::Block;
use crate::names;
use callbench_results::format;
use callbench_results::model::{Comparison, Experiment, Results};

pub use callbench_results::analysis::{EQUAL, NO_DIFFERENCE, TOO_FEW};
pub use callbench_results::format::comparison_figure as figure;

/// The paragraph that says how to read the comparisons (report.md and report.html).
pub const RULE: &str = "a vs b: the ratio a / b as the median of all ratios between their repetitions (Hodges–Lehmann), with the 95% interval got by inverting the Mann–Whitney rank test. The verdict reads that interval: it names the higher side only when the interval excludes 1, and says no significant difference when it holds 1, so the ratio and its verdict cannot disagree. With too few repetitions for any interval to reach 95% (3 against 3), the verdict is too few repetitions to tell and the interval is the whole range of ratios, with its real coverage. Exact counts (bytes per call, connections) are compared as the numbers they are, with no interval.";

pub fn experiment(r: &Results, exp: &Experiment) -> Vec<Block> {
    let mut comparisons: Vec<&Comparison> = r.comparisons.iter().filter(|c| c.experiment == exp.id).collect();
    // In the order of the table's rows (the list comes grouped by a text key: 10,000 before 2,000).
    let row = |id: &str| r.cells.iter().position(|c| c.id == id).unwrap_or(usize::MAX);
    comparisons.sort_by_key(|c| (row(&c.a), row(&c.b)));
    let items: Vec<String> = comparisons.into_iter().map(|c| sentence(r, c)).collect();
    if items.is_empty() {
        return vec![];
    }
    vec![Block::FoldedList { summary: format!("{}: {} comparisons", exp.title, items.len()), items }]
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
    let mut text = format!("{head}: {} — {}", figure(c, &c.ratio), c.verdict);
    if c.verdict != NO_DIFFERENCE && c.verdict != TOO_FEW && c.verdict != EQUAL {
        text.push_str(&format!(": {}", reading(&c.metric, &a, &b, c.ratio.median)));
    }
    text.push('.');
    if c.exact {
        // A count is the same however the repetitions' timings spread.
        return text;
    }
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

/// Every ratio interval `× [lo – hi]` in `text`, in order.
pub fn intervals(text: &str) -> Vec<(f64, f64)> {
    let number = |t: &str| t.trim().replace(',', "").parse::<f64>().ok();
    text.split("× [")
        .skip(1)
        .filter_map(|rest| {
            let (lo, hi) = rest.split_once(']')?.0.split_once(" – ")?;
            Some((number(lo)?, number(hi)?))
        })
        .collect()
}

/// Why a rendered line breaks the verdict rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    /// The words say one thing and the ratio's interval another: the line quoted.
    #[error("the verdict disagrees with its ratio: {0}")]
    Disagrees(String),
    /// A comparison line without its verdict, ratio or a readable interval: the line quoted.
    #[error("{what} in: {line}")]
    Unreadable { what: &'static str, line: String },
}

/// Checks any rendered line against the rule: a comparison line (its verdict after " — ") by
/// [`verdict_agrees`], any other (a sentence of the summary) by [`summary_agrees`].
pub fn line_agrees(line: &str) -> Result<(), VerdictError> {
    let verdicts = [NO_DIFFERENCE, TOO_FEW, EQUAL, "a higher", "b higher"];
    let is_comparison = line.split_once(" — ").is_some_and(|(_, v)| verdicts.iter().any(|w| v.starts_with(w)));
    if is_comparison {
        verdict_agrees(line)
    } else {
        summary_agrees(line)
    }
}

/// Checks a sentence of "What this run found" against the rule: the ratios of the part that
/// names who was ahead exclude 1, those after "no significant difference" hold 1 (parts are
/// separated by "; "; those of "too few repetitions to tell" may do either).
pub fn summary_agrees(sentence: &str) -> Result<(), VerdictError> {
    for part in sentence.split("; ") {
        let holds_one = |(lo, hi): &(f64, f64)| *lo <= 1.0 && 1.0 <= *hi;
        let found = intervals(part);
        let ok = if part.contains(TOO_FEW) {
            true
        } else if part.contains(NO_DIFFERENCE) {
            found.iter().all(holds_one)
        } else if part.contains(" was ahead ") {
            !found.iter().any(holds_one)
        } else {
            true
        };
        if !ok {
            return Err(VerdictError::Disagrees(sentence.to_string()));
        }
    }
    Ok(())
}

/// Checks one rendered comparison line (`…: 0.62× [0.58 – 0.66] — b higher: …`) against the rule:
/// a ratio whose interval excludes 1 is never "no significant difference", a side is named
/// higher only when the interval excludes 1 on its side, and a plain ratio (an exact count) has
/// a verdict that matches the number. Used by the tests of real reports.
pub fn verdict_agrees(line: &str) -> Result<(), VerdictError> {
    let number = |t: &str| t.trim().trim_end_matches('×').replace(',', "").parse::<f64>().ok();
    let unreadable = |what| VerdictError::Unreadable { what, line: line.to_string() };
    let (before, verdict) = line.split_once(" — ").ok_or_else(|| unreadable("no verdict"))?;
    let figure = before.rsplit(": ").next().unwrap_or_default();
    let (ratio, interval) = match figure.split_once(" [") {
        Some((r, rest)) => {
            let (lo, hi) = rest.split_once(']').map(|(i, _)| i).and_then(|i| i.split_once(" – ")).unwrap_or_default();
            (number(r), Some((number(lo), number(hi))))
        }
        None => (number(figure), None),
    };
    let ratio = ratio.ok_or_else(|| unreadable("no ratio"))?;
    let (above, below) = match interval {
        Some((Some(lo), Some(hi))) => (lo > 1.0, hi < 1.0),
        Some(_) => return Err(unreadable("unreadable interval")),
        None => (ratio > 1.0, ratio < 1.0), // as printed: 1.00× is equal
    };
    let ok = if verdict.starts_with(NO_DIFFERENCE) || verdict.starts_with(EQUAL) {
        !above && !below
    } else if verdict.starts_with("a higher") {
        above
    } else if verdict.starts_with("b higher") {
        below
    } else {
        verdict.starts_with(TOO_FEW)
    };
    if ok {
        Ok(())
    } else {
        Err(VerdictError::Disagrees(line.to_string()))
    }
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

    #[test]
    fn a_verdict_must_agree_with_the_interval_beside_it() {
        assert!(verdict_agrees("- a vs b, auth, p50 latency: 0.78× [0.69 – 0.96] — b higher: x.").is_ok());
        assert!(
            verdict_agrees("- a vs b, auth, p50 latency: 0.78× [0.69 – 0.96] — no significant difference.").is_err()
        );
        assert!(verdict_agrees("- a vs b, auth, p50 latency: 0.98× [0.90 – 1.06] — no significant difference.").is_ok());
        assert!(verdict_agrees("- a vs b, auth, p50 latency: 1.20× [0.90 – 1.60] — a higher: x.").is_err());
        assert!(verdict_agrees("- a vs b, auth, wire bytes received per call: 0.92× — b higher: x.").is_ok());
        assert!(
            verdict_agrees("- a vs b, auth, wire bytes received per call: 0.92× — no significant difference.").is_err()
        );
        assert!(verdict_agrees("- a vs b, x: 1,234× [1,100 – 1,300] — a higher: y.").is_ok());
        let few = "- a vs b, auth, p50 latency: 2.00× [1.80 – 2.20] (the whole range, only a 90% interval) — too few repetitions to tell.";
        assert!(verdict_agrees(few).is_ok());
    }

    #[test]
    fn summary_sentences_follow_the_rule_too() {
        let ok = "Sequential, auth: rust-actix was ahead on p50 latency at 45.0 µs — 0.58× [0.55 – 0.60] rust-tonic's; no significant difference from rust-axum (0.99× [0.97 – 1.02], within noise).";
        assert!(summary_agrees(ok).is_ok());
        let tied_but_apart = "S, auth: no significant difference on p50 latency between a at 45.0 µs and b (0.78× [0.69 – 0.96], within noise).";
        assert!(summary_agrees(tied_but_apart).is_err());
        let ahead_but_tied = "S, auth: a was ahead on p50 latency at 45.0 µs — 0.98× [0.90 – 1.06] b's.";
        assert!(summary_agrees(ahead_but_tied).is_err());
        assert_eq!(intervals("x 1,234× [1,100 – 1,300] y 0.5× [0.4 – 0.6]"), [(1100.0, 1300.0), (0.4, 0.6)]);
    }
}
