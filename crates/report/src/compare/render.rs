//! A comparison as Markdown: also what `callbench compare A B` prints in a terminal.

use super::{CellComparison, CompareReport, MetricComparison, Verdict};
use crate::doc::{RowMark, Table};
use crate::{escape, markdown, names};
use callbench_results::format::{self, MISSING};

impl CompareReport {
    pub fn markdown(&self) -> String {
        let mut parts = vec![
            "# callbench compare".to_string(),
            format!("- A: {}\n- B: {}", escape::markdown(&self.a), escape::markdown(&self.b)),
            format!("**{}**", escape::markdown(&self.summary())),
            format!("Ratios are B / A: the median of all ratios between the two runs' repetitions (Hodges–Lehmann) with the 95% interval of the Mann–Whitney rank test, the rule of every verdict within a run. Verdicts: *agree* when that interval holds 1; *noisy* when either cell is flagged noisy; *changed (significant)* when the whole interval lies beyond ±{:.0}% (the drift two whole runs can show; `--threshold`); *changed (within noise)* otherwise; *the machine's speed changed* when a headline changed beyond the threshold and the client's CPU per call (the same work for every call of the same load) changed as much the same way, or when the headline's change, divided by the median change of the client's CPU per call over the experiment's cells (a slow spell moves them all, one server's change only its own), lies within the threshold; *too few repetitions to tell* when no interval can reach 95% (3 against 3). Exact counts (bytes per call, connections) are compared as numbers: *agree* when equal, *changed (significant)* beyond the threshold.", self.threshold * 100.0),
        ];
        if !self.environment_differences.is_empty() {
            parts.push("## The environments differ".into());
            parts.push(list(&self.environment_differences));
        }
        let mut experiments: Vec<&str> = vec![];
        for c in &self.cells {
            if !experiments.contains(&c.experiment.as_str()) {
                experiments.push(&c.experiment);
            }
        }
        for exp in experiments {
            parts.push(format!("## {}", escape::markdown(exp)));
            let cells: Vec<&CellComparison> = self.cells.iter().filter(|c| c.experiment == exp).collect();
            parts.push(markdown::table(&table(&cells)));
        }
        if !self.only_in_a.is_empty() {
            parts.push("## Only in A".into());
            parts.push(list(&self.only_in_a));
        }
        if !self.only_in_b.is_empty() {
            parts.push("## Only in B".into());
            parts.push(list(&self.only_in_b));
        }
        let mut out = parts.join("\n\n");
        out.push('\n');
        out
    }

    /// One line: how many cells agree, are noisy or changed on their headline metric.
    pub fn summary(&self) -> String {
        let counts = self.counts();
        let count = |v: Verdict| counts.iter().find(|(k, _)| *k == v).map_or(0, |(_, n)| *n);
        let mut parts: Vec<String> =
            [Verdict::Agree, Verdict::Noisy, Verdict::ChangedSignificant, Verdict::ChangedWithinNoise]
                .iter()
                .map(|v| format!("{} {}", count(*v), v.as_str()))
                .collect();
        for v in [Verdict::MachineSpeed, Verdict::CountChanged, Verdict::TooFew, Verdict::Missing, Verdict::NotMeasured]
        {
            if count(v) > 0 {
                parts.push(format!("{} {}", count(v), v.as_str()));
            }
        }
        format!(
            "Headline metric of {} matched cells: {}; {} cells only in A, {} only in B.",
            self.cells.len(),
            parts.join(", "),
            self.only_in_a.len(),
            self.only_in_b.len()
        )
    }
}

fn list(items: &[String]) -> String {
    items.iter().map(|i| format!("- {}", escape::markdown(i))).collect::<Vec<_>>().join("\n")
}

fn table(cells: &[&CellComparison]) -> Table {
    let mut t = Table::new(&[
        ("cell", false),
        ("metric", false),
        ("A", true),
        ("B", true),
        ("B / A", true),
        ("verdict", false),
    ]);
    for c in cells {
        // Metrics neither side has (no server CPU in-process) would only add empty rows.
        let measured = c.metrics.iter().filter(|m| m.verdict != Verdict::NotMeasured);
        for (i, m) in measured.enumerate() {
            let shown = |e: &Option<callbench_results::model::Estimate>| {
                e.as_ref().map_or(MISSING.into(), |e| format::estimate(&m.metric, e))
            };
            let mut metric = names::metric_label(&m.metric);
            if m.metric == c.headline {
                metric.push_str(" (headline)");
            }
            let mark = match m.verdict {
                Verdict::ChangedSignificant | Verdict::Missing => RowMark::Failed,
                Verdict::Noisy | Verdict::ChangedWithinNoise | Verdict::CountChanged | Verdict::MachineSpeed => {
                    RowMark::Noisy
                }
                Verdict::Agree | Verdict::NotMeasured | Verdict::TooFew => RowMark::Normal,
            };
            t.push(
                vec![
                    if i == 0 { c.id.clone() } else { String::new() },
                    metric,
                    shown(&m.a),
                    shown(&m.b),
                    m.ratio.as_ref().map_or(MISSING.into(), |r| ratio(m, r)),
                    m.verdict.as_str().into(),
                ],
                mark,
            );
        }
    }
    t
}

/// B / A as the within-run comparisons print it: a count's plain ratio, a timing's interval, and
/// the real coverage of one short of 95%.
fn ratio(m: &MetricComparison, r: &callbench_results::model::Estimate) -> String {
    match (m.exact, m.verdict, m.coverage) {
        (true, _, _) => format::ratio_value(r.median),
        (false, Verdict::TooFew, Some(p)) => {
            format!("{} (the whole range, only a {:.0}% interval)", format::ratio(r), p * 100.0)
        }
        _ => format::ratio(r),
    }
}
