//! The answer as charts, opening the HTML report: for each question the run answers, the medians
//! of the cells its line names (the best REST, gRPC and in-process cell; a kept and a new
//! connection), with their 95% intervals, side by side on the question's headline.

use super::bars::{self, BarChart, Group, Slot};
use super::palette::COLOURS;
use crate::names;
use crate::summary::answer;
use callbench_results::format;
use callbench_results::model::Results;

/// One chart per answered question (none when the run answers none).
pub fn charts(r: &Results) -> Vec<String> {
    r.experiments
        .iter()
        .filter_map(|exp| {
            let (metric, cells) = answer::cells(r, exp)?;
            let typical = cells.iter().filter_map(|(_, c)| c.summary.get(metric)).map(|e| e.median).fold(0.0, f64::max);
            let unit = format::display_unit(metric, typical);
            let slots = cells
                .iter()
                .map(|(_, c)| {
                    let e = &c.summary[metric];
                    let tooltip = format!("{}: {}", names::cell_title(r, c), format::estimate(metric, e));
                    Slot::Value { median: e.median / unit.divisor, lo: e.lo / unit.divisor, hi: e.hi / unit.divisor, tooltip }
                })
                .collect();
            let label = exp.answer.clone().unwrap_or_default();
            let chart = BarChart {
                kind: "answer",
                title: label.clone(),
                desc: format!(
                    "The answer's line for \"{label}\": the median {} of each cell it names, whiskers its 95% interval.",
                    names::metric_label(metric)
                ),
                y_title: names::metric_title(metric, unit.unit),
                x_title: cells.first().map(|(_, c)| c.workload.clone()).unwrap_or_default(),
                series: cells.iter().enumerate().map(|(i, (name, c))| (format!("{name} ({})", c.server), COLOURS[i % COLOURS.len()])).collect(),
                groups: vec![Group { label: vec![names::metric_label(metric)], slots }],
                percent: false,
                ceiling: None,
            };
            bars::render(&chart)
        })
        .collect()
}
