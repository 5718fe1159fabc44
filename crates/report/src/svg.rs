//! Inline SVG charts, drawn on the server side (no JavaScript, no external resource): per
//! experiment, the headline metric (and throughput) as bars with 95% whiskers, the sweep as lines,
//! the latency percentile spectrum on the nines scale, and the CPU per call of both sides.
//!
//! Stable class names for tests and styles: `chart` on every `<svg>` (with `data-kind`: `headline`,
//! `throughput`, `rate`, `sweep`, `spectrum`, `cpu`), `bar`, `whisker`, `series` (lines),
//! `point`, `missing` (a cell without a figure), `legend`, `axis`.

mod bars;
mod canvas;
mod cpu;
mod headline;
mod lines;
mod palette;
pub mod scale;
mod spectrum;
mod sweep;

pub use palette::{Palette, COLOURS};

use crate::model::{Cell, Experiment, Results};
use crate::names;

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
    charts.extend(spectrum::chart(&ctx));
    charts.extend(cpu::chart(&ctx));
    charts
}

/// One experiment's cells and how to name and colour them.
pub(crate) struct Ctx<'a> {
    pub r: &'a Results,
    pub exp: &'a Experiment,
    pub cells: Vec<&'a Cell>,
    pub palette: &'a Palette,
    /// The workloads in order of appearance.
    pub workloads: Vec<&'a str>,
}

impl<'a> Ctx<'a> {
    fn new(r: &'a Results, exp: &'a Experiment, palette: &'a Palette) -> Ctx<'a> {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
        let mut workloads: Vec<&str> = vec![];
        for c in &cells {
            if !workloads.contains(&c.workload.as_str()) {
                workloads.push(&c.workload);
            }
        }
        Ctx { r, exp, cells, palette, workloads }
    }

    /// The server (and transport when ambiguous): the colour of the cell.
    pub fn series(&self, cell: &Cell) -> String {
        names::series(self.r, cell)
    }

    /// The series, with the workload when the experiment has several: one line per such label.
    pub fn line(&self, cell: &Cell) -> String {
        if self.workloads.len() > 1 {
            format!("{} · {}", self.series(cell), cell.workload)
        } else {
            self.series(cell)
        }
    }

    pub fn workload_index(&self, cell: &Cell) -> usize {
        self.workloads.iter().position(|w| *w == cell.workload).unwrap_or(0)
    }

    /// The series names of the experiment, in the report's order.
    pub fn all_series(&self) -> Vec<String> {
        let mut out: Vec<String> = vec![];
        for c in &self.cells {
            let s = self.series(c);
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out.sort_by_key(|s| self.palette.rank(s));
        out
    }

    /// `sequential latency: one call at a time — p50 latency`.
    pub fn title(&self, what: &str) -> String {
        format!("{} — {what}", self.exp.title)
    }
}
