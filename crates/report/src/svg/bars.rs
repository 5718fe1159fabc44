//! A grouped bar chart with 95% interval whiskers: one group per category (workload, swept value
//! or cell), one bar per series in each group. Classes: `bar`, `whisker`, `missing`.

use super::canvas::{self, LegendEntry, Plot};
use super::scale::{Kind, Scale, LOG_SPAN};
use crate::escape::html as esc;
use callbench_results::format;
use std::fmt::Write;

pub struct BarChart {
    pub kind: &'static str,
    pub title: String,
    pub desc: String,
    pub y_title: String,
    pub x_title: String,
    /// Name and colour of each series, in slot order.
    pub series: Vec<(String, &'static str)>,
    pub groups: Vec<Group>,
    /// A share of a whole (0–100%): always a linear axis from zero.
    pub percent: bool,
    /// A level marked across the plot (in the display unit), with its label.
    pub ceiling: Option<(f64, String)>,
}

pub struct Group {
    /// One or two lines under the group.
    pub label: Vec<String>,
    /// One slot per series.
    pub slots: Vec<Slot>,
}

pub enum Slot {
    /// The series has no cell in this group.
    Absent,
    /// A cell that has no figure (failed, not measured): marked, not left blank.
    Missing { tooltip: String },
    /// Median and interval, already in the display unit.
    Value { median: f64, lo: f64, hi: f64, tooltip: String },
}

const HEIGHT: f64 = 320.0;
const BAR: f64 = 16.0;
const MIN_WIDTH: f64 = 520.0;

/// The chart, or None when no slot has a value.
pub fn render(chart: &BarChart) -> Option<String> {
    let values: Vec<f64> = chart
        .groups
        .iter()
        .flat_map(|g| g.slots.iter())
        .filter_map(|s| match s {
            Slot::Value { median, hi, .. } => Some(hi.max(*median)),
            _ => None,
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let max = values.iter().copied().chain(chart.ceiling.as_ref().map(|c| c.0)).fold(0.0, f64::max);
    let smallest = chart
        .groups
        .iter()
        .flat_map(|g| g.slots.iter())
        .filter_map(|s| match s {
            Slot::Value { median, lo, .. } => Some(lo.min(*median)),
            _ => None,
        })
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // In-process bars (millions of calls/s) beside loopback ones (tens of thousands) would flatten
    // them to nothing on a linear axis: past 20× (the smaller bar under 5% of the height) the
    // axis is logarithmic.
    let scale = if !chart.percent && smallest.is_finite() && max / smallest > LOG_SPAN {
        Scale::log(smallest, max)
    } else {
        Scale::from_zero(max)
    };
    let y_title = match scale.kind {
        Kind::Log => format!("{} (log scale)", chart.y_title),
        Kind::Linear => chart.y_title.clone(),
    };
    let legend: Vec<LegendEntry> = chart
        .series
        .iter()
        .map(|(label, colour)| LegendEntry { label: label.clone(), colour, line: None, opacity: 1.0 })
        .collect();
    let n = chart.series.len().max(1) as f64;
    let widest_label =
        chart.groups.iter().flat_map(|g| g.label.iter()).map(|l| canvas::text_width(l)).fold(0.0, f64::max);
    let mut group_width = (n * BAR + 18.0).max(widest_label + 12.0);
    let (left, right_margin) = (70.0, canvas::legend_width(&legend) + 16.0);
    let needed = left + right_margin + group_width * chart.groups.len() as f64;
    if needed < MIN_WIDTH {
        group_width += (MIN_WIDTH - needed) / chart.groups.len().max(1) as f64;
    }
    let width = (left + right_margin + group_width * chart.groups.len() as f64).max(MIN_WIDTH);
    let label_lines = chart.groups.iter().map(|g| g.label.len()).max().unwrap_or(1) as f64;
    let height = HEIGHT.max(canvas::legend_height(&legend) + 60.0);
    let plot = Plot { left, top: 40.0, right: width - right_margin, bottom: height - 30.0 - 13.0 * label_lines };

    let mut out = String::new();
    canvas::open(&mut out, chart.kind, &chart.title, &chart.desc, width, height);
    let ticks: Vec<(f64, String)> = scale.ticks().into_iter().map(|t| (t, format::compact(t))).collect();
    canvas::y_axis(&mut out, &plot, &scale, &ticks, &y_title);
    canvas::baseline(&mut out, &plot);
    let bar_width = ((group_width - 18.0) / n).min(BAR * 2.5);
    for (gi, group) in chart.groups.iter().enumerate() {
        let g_left = plot.left + gi as f64 * group_width;
        let first = g_left + (group_width - bar_width * n) / 2.0;
        for (si, slot) in group.slots.iter().enumerate() {
            let x = first + si as f64 * bar_width;
            let colour = chart.series.get(si).map_or("#777", |s| s.1);
            draw_slot(&mut out, &plot, &scale, x, bar_width, colour, slot);
        }
        for (li, line) in group.label.iter().enumerate() {
            let _ = write!(
                out,
                r##"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
                g_left + group_width / 2.0,
                plot.bottom + 15.0 + 13.0 * li as f64,
                esc(line)
            );
        }
    }
    if let Some((level, label)) = &chart.ceiling {
        let y = plot.y(&scale, *level);
        let _ = write!(
            out,
            r##"<g class="ceiling"><line x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#222" stroke-dasharray="6 4"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#222">{}</text></g>"##,
            plot.left,
            plot.right,
            plot.right - 4.0,
            y - 5.0,
            esc(label)
        );
    }
    canvas::x_title(&mut out, &plot, height - 8.0, &chart.x_title);
    canvas::legend(&mut out, plot.right + 16.0, plot.top + 4.0, &legend);
    canvas::close(&mut out);
    Some(out)
}

fn draw_slot(out: &mut String, plot: &Plot, scale: &Scale, x: f64, width: f64, colour: &str, slot: &Slot) {
    let inner = (width - 2.0).max(2.0);
    match slot {
        Slot::Absent => {}
        Slot::Missing { tooltip } => {
            let _ = write!(
                out,
                r##"<text class="missing" x="{:.1}" y="{:.1}" text-anchor="middle" fill="#b00020" font-weight="700">×<title>{}</title></text>"##,
                x + width / 2.0,
                plot.bottom - 4.0,
                esc(tooltip)
            );
        }
        Slot::Value { median, lo, hi, tooltip } => {
            let floor = if scale.kind == Kind::Log { scale.min } else { 0.0 };
            let (y, base) = (plot.y(scale, *median), plot.y(scale, floor));
            let _ = write!(
                out,
                r#"<rect class="bar" x="{:.1}" y="{y:.1}" width="{inner:.1}" height="{:.1}" fill="{colour}"><title>{}</title></rect>"#,
                x + 1.0,
                (base - y).max(0.5),
                esc(tooltip)
            );
            if hi > lo {
                canvas::whisker(out, x + width / 2.0, plot.y(scale, *lo), plot.y(scale, *hi), tooltip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(slots: Vec<Slot>) -> BarChart {
        BarChart {
            kind: "headline",
            title: "t".into(),
            desc: "d".into(),
            y_title: "y".into(),
            x_title: "x".into(),
            series: vec![("a".into(), "#000000"), ("b".into(), "#111111"), ("c".into(), "#222222")],
            groups: vec![Group { label: vec!["auth".into()], slots }],
            percent: false,
            ceiling: None,
        }
    }

    fn value(median: f64, lo: f64, hi: f64) -> Slot {
        Slot::Value { median, lo, hi, tooltip: format!("{median}") }
    }

    #[test]
    fn one_bar_per_value_a_mark_per_missing_cell_and_whiskers_only_for_intervals() {
        let svg = render(&chart(vec![
            value(10.0, 9.0, 11.0),
            Slot::Missing { tooltip: "crashed".into() },
            value(5.0, 5.0, 5.0),
        ]))
        .unwrap();
        assert!(svg.starts_with(r#"<svg class="chart" data-kind="headline""#));
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
        assert_eq!(svg.matches(r#"class="missing""#).count(), 1);
        assert_eq!(svg.matches(r#"class="whisker""#).count(), 1);
        assert_eq!(svg.matches("<title>").count(), 1 + 2 + 1 + 1, "chart, bars, whisker, missing mark");
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn values_spanning_more_than_20x_get_a_log_axis() {
        let svg =
            render(&chart(vec![value(1_600_000.0, 1_550_000.0, 1_650_000.0), value(60_000.0, 58_000.0, 61_000.0)]))
                .unwrap();
        assert!(svg.contains("(log scale)"), "{svg}");
        let close = render(&chart(vec![value(100_000.0, 95_000.0, 105_000.0), value(60_000.0, 58_000.0, 61_000.0)]));
        assert!(!close.unwrap().contains("log scale"));
    }

    #[test]
    fn no_values_no_chart() {
        assert!(render(&chart(vec![Slot::Missing { tooltip: "x".into() }, Slot::Absent, Slot::Absent])).is_none());
    }
}
