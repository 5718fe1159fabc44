//! One colour per series (server, or server and transport) across every chart of a report, from
//! the Okabe–Ito palette (distinguishable with the common colour-vision deficiencies).

use crate::names;
use callbench_results::model::Results;

pub const COLOURS: &[&str] = &["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999999"];

/// The two sides of a call in the CPU chart.
pub const CLIENT: &str = "#56B4E9";
pub const SERVER: &str = "#D55E00";

/// Dash patterns told apart by a second dimension (workload, percentile): solid first.
pub const DASHES: &[&str] = &["", "7 4", "2 3", "10 3 2 3"];

pub struct Palette {
    series: Vec<String>,
}

impl Palette {
    /// Colours in the order series first appear among the cells (so a server keeps its colour
    /// from one experiment's chart to the next).
    pub fn new(r: &Results) -> Palette {
        let mut series: Vec<String> = vec![];
        for cell in &r.cells {
            let name = names::series(r, cell);
            if !series.contains(&name) {
                series.push(name);
            }
        }
        Palette { series }
    }

    pub fn colour(&self, series: &str) -> &'static str {
        COLOURS[self.rank(series) % COLOURS.len()]
    }

    /// The order of series in legends and bar groups: the same in every chart.
    pub fn rank(&self, series: &str) -> usize {
        self.series.iter().position(|s| s == series).unwrap_or(self.series.len())
    }
}

pub fn dash(i: usize) -> &'static str {
    DASHES[i % DASHES.len()]
}
