//! The latency percentile spectrum of each cell (all its runs merged), as HdrHistogram plots it:
//! x on the "nines" scale (log of 1 / (1 − p): 90%, 99%, 99.9% equally spaced), y log µs.

use super::ctx::Ctx;
use super::lines::{self, Axis, LineChart, Point, Series};
use super::palette;
use super::scale::{nines, nines_ticks, Kind, Scale};
use callbench_results::format::{self, duration_tick};
use callbench_results::model::Cell;

/// The axis never stops before 99% (nor goes past 99.9999%).
const MIN_NINES: f64 = 2.0;
const MAX_NINES: f64 = 6.0;

pub fn chart(ctx: &Ctx) -> Option<String> {
    let cells: Vec<&Cell> = ctx.cells.iter().copied().filter(|c| c.spectrum.len() >= 2).collect();
    if cells.is_empty() {
        return None;
    }
    let as_percent = percent_factor(&cells);
    let finite_nines = cells
        .iter()
        .flat_map(|c| c.spectrum.iter())
        .map(|(p, _)| nines(p * as_percent))
        .filter(|n| n.is_finite())
        .fold(0.0, f64::max);
    let max_nines = finite_nines.ceil().clamp(MIN_NINES, MAX_NINES);
    let values: Vec<f64> =
        cells.iter().flat_map(|c| c.spectrum.iter()).map(|(_, us)| *us).filter(|v| *v > 0.0).collect();
    let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    if values.is_empty() {
        return None;
    }
    let x = Axis {
        scale: Scale { kind: Kind::Linear, min: 0.0, max: max_nines },
        ticks: nines_ticks(max_nines),
        title: "percentile".into(),
    };
    let y = lines::axis(Scale::log(lo, hi), "latency (log scale)".into(), duration_tick);
    let series = cells
        .iter()
        .map(|c| {
            let label = line_label(ctx, c);
            Series {
                colour: ctx.palette.colour(&ctx.series(c)),
                dash: palette::dash(ctx.workload_index(c)),
                opacity: sweep_opacity(ctx, c),
                markers: false,
                points: c
                    .spectrum
                    .iter()
                    .map(|(p, us)| Point {
                        x: nines(p * as_percent).min(max_nines),
                        y: *us,
                        interval: None,
                        tooltip: format!("{label}: p{} {}", format::compact(p * as_percent), format::duration_us(*us)),
                    })
                    .collect(),
                label,
            }
        })
        .collect();
    lines::render(&LineChart {
        kind: "spectrum",
        title: ctx.title("latency percentile spectrum"),
        desc: "Latency by percentile for each cell, all repetitions merged; the percentile axis spaces 90%, 99%, 99.9% evenly, latency is on a log scale. The 100% point (the maximum) sits at the right edge.".into(),
        x,
        y,
        series,
    })
}

/// Percentiles are 0–100 (`50.0` is the median); a spectrum written as fractions 0–1 is accepted too.
fn percent_factor(cells: &[&Cell]) -> f64 {
    let all_fractions = cells.iter().flat_map(|c| c.spectrum.iter()).all(|(p, _)| *p <= 1.0);
    if all_fractions {
        100.0
    } else {
        1.0
    }
}

/// In a sweep, a server's lines go from light (smallest value) to dark (largest).
fn sweep_opacity(ctx: &Ctx, cell: &Cell) -> f64 {
    let Some(x) = cell.x.filter(|_| ctx.exp.sweep.is_some()) else { return 1.0 };
    let mut xs: Vec<f64> = ctx.cells.iter().filter_map(|c| c.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let rank = xs.iter().position(|v| *v == x).unwrap_or(0);
    if xs.len() < 2 {
        1.0
    } else {
        0.3 + 0.7 * rank as f64 / (xs.len() - 1) as f64
    }
}

/// In a sweep every swept value has its own line.
fn line_label(ctx: &Ctx, cell: &Cell) -> String {
    match (ctx.exp.sweep.as_deref(), cell.x) {
        (Some(sweep), Some(x)) => format!("{} · {sweep} {}", ctx.line(cell), format::swept(x)),
        _ => ctx.line(cell),
    }
}
