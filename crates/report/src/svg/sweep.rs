//! Experiments that sweep a parameter: latency against the offered load (`rate`), or the headline
//! metric against any other swept value (payload size, connections, streams...). Log axes when the
//! values span more than 20×.

use super::ctx::Ctx;
use super::lines::{self, Axis, LineChart, Point, Series};
use super::palette;
use super::scale::{Kind, Scale};
use crate::names;
use callbench_results::format::{self, duration_tick};
use callbench_results::model::Cell;
use callbench_results::stats;

/// p50 and p99 (with whiskers) against the rate requested, one colour per server.
pub fn latency_vs_rate(ctx: &Ctx) -> Option<String> {
    let metrics = [("latency_p50_us", "p50", palette::dash(0)), ("latency_p99_us", "p99", palette::dash(1))];
    let mut series = vec![];
    for (line, cells) in lines_of(ctx) {
        for (metric, name, dash) in metrics {
            series.push(Series {
                label: format!("{line} {name}"),
                colour: ctx.palette.colour(&ctx.series(cells[0])),
                dash,
                opacity: 1.0,
                markers: true,
                points: points(ctx, &cells, metric, rate_requested),
            });
        }
    }
    let whiskers = if ctx.cells.iter().any(|c| c.pooled.iter().any(|m| m == "latency_p99_us")) {
        "each point of all repetitions' calls merged, whiskers its 95% interval with the repetitions resampled"
    } else {
        "whiskers: 95% interval of the repetitions"
    };
    let desc = format!(
        "Latency (p50 solid, p99 dashed) counted from each call's intended start, against the rate requested; {whiskers}."
    );
    let x = x_axis(&series, "rate requested (calls/s)".into());
    let y = y_axis(&series, "latency_p99_us", "latency");
    lines::render(&LineChart { kind: "rate", title: ctx.title("latency vs offered load"), desc, x, y, series })
}

/// The headline metric against the swept value, one line per server (and workload).
pub fn headline_vs_x(ctx: &Ctx) -> Option<String> {
    let metric = ctx.exp.headline.as_str();
    let sweep = ctx.exp.sweep.clone().unwrap_or_default();
    let series: Vec<Series> = lines_of(ctx)
        .into_iter()
        .map(|(line, cells)| Series {
            colour: ctx.palette.colour(&ctx.series(cells[0])),
            dash: palette::dash(ctx.workload_index(cells[0])),
            opacity: 1.0,
            markers: true,
            points: points(ctx, &cells, metric, |c| c.x),
            label: line,
        })
        .collect();
    let label = names::metric_label(metric);
    let desc = format!("The median {label} of each cell against {sweep}; whiskers: 95% interval of the repetitions.");
    let x = x_axis(&series, sweep_title(&sweep));
    let y = y_axis(&series, metric, &label);
    lines::render(&LineChart { kind: "sweep", title: ctx.title(&format!("{label} vs {sweep}")), desc, x, y, series })
}

fn x_axis(series: &[Series], title: String) -> Axis {
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter()).map(|p| p.x).collect();
    lines::axis(Scale::auto(&xs, true), title, format::compact)
}

/// The y axis in the metric's raw unit: latencies on a log scale get µs/ms ticks (`50 µs`, `2 ms`),
/// on a linear one the unit of the largest value.
fn y_axis(series: &[Series], metric: &str, label: &str) -> Axis {
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [Some(p.y), p.interval.map(|i| i.0), p.interval.map(|i| i.1)])
        .flatten()
        .collect();
    let scale = Scale::auto(&ys, true);
    let duration = format::metric_unit(metric) == "µs";
    match scale.kind {
        Kind::Log if duration => lines::axis(scale, format!("{label} (log scale)"), duration_tick),
        Kind::Log => lines::axis(
            scale,
            format!("{} (log scale)", names::metric_title(metric, format::metric_unit(metric))),
            format::compact,
        ),
        Kind::Linear => {
            let unit = format::display_unit(metric, scale.max);
            let title =
                if duration { format!("{label} ({})", unit.unit) } else { names::metric_title(metric, unit.unit) };
            lines::axis(scale, title, move |v| format::compact(v / unit.divisor))
        }
    }
}

/// The experiment's lines (server, and workload when several) with their cells, in order.
fn lines_of<'a>(ctx: &Ctx<'a>) -> Vec<(String, Vec<&'a Cell>)> {
    let mut out: Vec<(String, Vec<&Cell>)> = vec![];
    for c in &ctx.cells {
        let line = ctx.line(c);
        match out.iter_mut().find(|(l, _)| *l == line) {
            Some((_, cells)) => cells.push(c),
            None => out.push((line, vec![c])),
        }
    }
    out.sort_by_key(|(_, cells)| ctx.palette.rank(&ctx.series(cells[0])));
    out
}

/// One point per cell that has both an x and the metric (raw values), sorted by x.
fn points(ctx: &Ctx, cells: &[&Cell], metric: &str, x_of: impl Fn(&Cell) -> Option<f64>) -> Vec<Point> {
    let mut points: Vec<Point> = cells
        .iter()
        .filter_map(|c| {
            let (x, e) = (x_of(c)?, c.summary.get(metric)?);
            Some(Point {
                x,
                y: e.median,
                // A count has no interval: no whisker.
                interval: (!callbench_results::model::is_exact_count(metric)).then_some((e.lo, e.hi)),
                tooltip: format!(
                    "{}: {} {}",
                    names::cell_title(ctx.r, c),
                    names::metric_label(metric),
                    format::estimate(metric, e)
                ),
            })
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    points
}

/// The swept rate: the cell's x, or else the median rate its runs requested.
fn rate_requested(cell: &Cell) -> Option<f64> {
    cell.x.or_else(|| stats::median(&cell.runs.iter().filter_map(|r| r.rate_requested).collect::<Vec<_>>()))
}

fn sweep_title(sweep: &str) -> String {
    match sweep {
        "payload_size" => "payload size (bytes)".into(),
        "rate" => "rate requested (calls/s)".into(),
        other => other.replace('_', " "),
    }
}
