//! One metric of an experiment as bars: grouped by workload (or by swept value), one colour per
//! server, whiskers for the 95% interval, a mark for cells without a figure.

use super::bars::{self, BarChart, Group, Slot};
use super::ctx::Ctx;
use crate::names;
use callbench_results::format;
use callbench_results::model::Cell;

pub fn bars(ctx: &Ctx, metric: &str) -> Option<String> {
    let typical = ctx.cells.iter().filter_map(|c| c.summary.get(metric)).map(|e| e.median).fold(0.0, f64::max);
    let unit = format::display_unit(metric, typical);
    let series = ctx.all_series();
    let groups: Vec<Group> = group_keys(ctx)
        .into_iter()
        .map(|(workload, x, word)| {
            let slots = series
                .iter()
                .map(|s| {
                    let cell = ctx
                        .cells
                        .iter()
                        .find(|c| c.workload == workload && c.x == x && word_of(ctx, c) == word && ctx.series(c) == *s);
                    cell.map_or(Slot::Absent, |c| slot(ctx, c, metric, unit))
                })
                .collect();
            let label = match &word {
                Some(w) if ctx.workloads.len() > 1 => vec![w.clone(), workload.clone()],
                Some(w) => vec![w.clone()],
                None => label(ctx, &workload, x),
            };
            Group { label, slots }
        })
        .collect();
    let sweep = ctx.exp.sweep.as_deref();
    let x_title = match (sweep, ctx.workloads.len() > 1) {
        (Some(s), true) => format!("{s}, workload"),
        (Some(s), false) => format!("{s} ({})", ctx.workloads.first().copied().unwrap_or("")),
        (None, _) => "workload".into(),
    };
    let chart = BarChart {
        kind: if metric == ctx.exp.headline { "headline" } else { "throughput" },
        title: ctx.title(&names::metric_label(metric)),
        desc: format!(
            "Bars: the median {} of the repetitions of each cell; {}. Grouped by {}, one colour per server; × marks a cell without a figure.",
            names::metric_label(metric),
            if callbench_results::model::is_exact_count(metric) { "counted exactly, so no interval" } else { "whiskers: its 95% interval" },
            if sweep.is_some() { "swept value" } else { "workload" }
        ),
        y_title: names::metric_title(metric, unit.unit),
        x_title,
        series: series.iter().map(|s| (s.clone(), ctx.palette.colour(s))).collect(),
        groups,
        percent: false,
        ceiling: None,
    };
    bars::render(&chart)
}

/// A swept value that is a word (`start = cold`, `mode = per-request`): cells without an x.
fn word_of(ctx: &Ctx, c: &Cell) -> Option<String> {
    c.x.is_none().then(|| names::swept_value(Some(ctx.exp), c)).flatten()
}

/// The groups: one per (workload, swept value), by increasing swept value (words in order of appearance).
fn group_keys(ctx: &Ctx) -> Vec<(String, Option<f64>, Option<String>)> {
    let mut keys = vec![];
    for c in &ctx.cells {
        let key = (c.workload.clone(), c.x, word_of(ctx, c));
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.sort_by(|a, b| a.1.unwrap_or(f64::NEG_INFINITY).total_cmp(&b.1.unwrap_or(f64::NEG_INFINITY)));
    keys
}

fn label(ctx: &Ctx, workload: &str, x: Option<f64>) -> Vec<String> {
    match x {
        Some(x) if ctx.workloads.len() > 1 => vec![format::swept(x), workload.into()],
        Some(x) => vec![format::swept(x)],
        None => vec![workload.into()],
    }
}

pub fn slot(ctx: &Ctx, cell: &Cell, metric: &str, unit: format::DisplayUnit) -> Slot {
    let title = names::cell_title(ctx.r, cell);
    match cell.summary.get(metric) {
        // A count has no interval: no whisker.
        Some(e) if callbench_results::model::is_exact_count(metric) => Slot::Value {
            median: e.median / unit.divisor,
            lo: e.median / unit.divisor,
            hi: e.median / unit.divisor,
            tooltip: format!("{title}: {}", format::estimate(metric, e)),
        },
        Some(e) => Slot::Value {
            median: e.median / unit.divisor,
            lo: e.lo / unit.divisor,
            hi: e.hi / unit.divisor,
            tooltip: format!("{title}: {}", format::estimate(metric, e)),
        },
        None => Slot::Missing { tooltip: format!("{title}: no figure ({})", names::status_with_error(cell)) },
    }
}
