//! One experiment's cells as every chart reads them: their series, lines, workloads and titles.

use super::palette::Palette;
use crate::names;
use callbench_results::model::{Cell, Experiment, Results};

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
    pub fn new(r: &'a Results, exp: &'a Experiment, palette: &'a Palette) -> Ctx<'a> {
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
