//! Inline SVG charts, drawn on the server side (no JavaScript, no external resource): per
//! experiment, the headline metric (and throughput) as bars with 95% whiskers, the sweep as lines,
//! connection set-up phase by phase (stacked), the latency percentile spectrum on the nines
//! scale, the CPU per call of both sides, and, where several load tools made the calls, which side
//! was busy tool by tool.
//!
//! Stable class names for tests and styles: `chart` on every `<svg>` (with `data-kind`: `answer`, `headline`,
//! `throughput`, `rate`, `sweep`, `setup`, `spectrum`, `cpu`, `tool-claims`, `tools`), `bar`, `whisker`, `series` (lines),
//! `point`, `missing` (a cell without a figure), `legend`, `axis`.

mod answer;
mod bars;
mod canvas;
mod cpu;
mod ctx;
mod headline;
mod lines;
mod palette;
mod round_trips;
pub mod scale;
mod spectrum;
mod sweep;
mod tools;

pub use answer::charts as answer_charts;
pub use palette::{Palette, COLOURS};

use callbench_results::model::{Experiment, Results};
use ctx::Ctx;

/// Every chart of one experiment, in the order the report shows them (possibly none).
pub fn experiment_charts(r: &Results, exp: &Experiment) -> Vec<String> {
    experiment_charts_with(r, exp, &Palette::new(r))
}

/// As [`experiment_charts`], with a palette shared by the whole report.
pub fn experiment_charts_with(r: &Results, exp: &Experiment, palette: &Palette) -> Vec<String> {
    let ctx = Ctx::new(r, exp, palette);
    if ctx.cells.is_empty() {
        return vec![];
    }
    let mut charts = vec![];
    charts.extend(headline::bars(&ctx, &exp.headline));
    match exp.sweep.as_deref() {
        Some("rate") => charts.extend(sweep::latency_vs_rate(&ctx)),
        Some(_) => charts.extend(sweep::headline_vs_x(&ctx)),
        None => {}
    }
    if exp.headline != "throughput_per_s" {
        charts.extend(headline::bars(&ctx, "throughput_per_s"));
    }
    charts.extend(round_trips::chart(&ctx));
    charts.extend(spectrum::chart(&ctx));
    charts.extend(cpu::chart(&ctx));
    charts.extend(tools::charts(&ctx));
    charts
}
