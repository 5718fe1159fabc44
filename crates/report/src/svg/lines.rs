//! A line chart: one polyline per series (`class="series"`), optional point markers (`point`)
//! with 95% interval whiskers (`whisker`), on linear, log or custom (nines) axes.

use super::canvas::{self, LegendEntry, Plot};
use super::scale::{Kind, Scale};
use crate::escape::html as esc;
use std::fmt::Write;

pub struct Axis {
    pub scale: Scale,
    pub ticks: Vec<(f64, String)>,
    pub title: String,
}

pub struct LineChart {
    pub kind: &'static str,
    pub title: String,
    pub desc: String,
    /// Positions along x are `scale.fraction(point.x)`: callers transform first when needed.
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

pub struct Series {
    pub label: String,
    pub colour: &'static str,
    pub dash: &'static str,
    /// Line opacity (1 unless lines of one colour must be told apart).
    pub opacity: f64,
    /// Draw a marker (with its whisker) at every point.
    pub markers: bool,
    pub points: Vec<Point>,
}

pub struct Point {
    pub x: f64,
    pub y: f64,
    /// The 95% interval of `y`.
    pub interval: Option<(f64, f64)>,
    pub tooltip: String,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 340.0;

/// The chart, or None when no series has a point to draw.
pub fn render(chart: &LineChart) -> Option<String> {
    let drawable = |p: &Point| p.x.is_finite() && p.y.is_finite() && (chart.y.scale.kind == Kind::Linear || p.y > 0.0);
    if !chart.series.iter().any(|s| s.points.iter().any(drawable)) {
        return None;
    }
    let legend: Vec<LegendEntry> = chart
        .series
        .iter()
        .map(|s| LegendEntry { label: s.label.clone(), colour: s.colour, line: Some(s.dash), opacity: s.opacity })
        .collect();
    let width = WIDTH.max(70.0 + 300.0 + canvas::legend_width(&legend) + 16.0);
    let height = HEIGHT.max(canvas::legend_height(&legend) + 60.0);
    let plot =
        Plot { left: 70.0, top: 40.0, right: width - canvas::legend_width(&legend) - 16.0, bottom: height - 50.0 };
    let mut out = String::new();
    canvas::open(&mut out, chart.kind, &chart.title, &chart.desc, width, height);
    canvas::y_axis(&mut out, &plot, &chart.y.scale, &chart.y.ticks, &chart.y.title);
    canvas::x_axis(&mut out, &plot, &chart.x.scale, &chart.x.ticks, &chart.x.title);
    for s in &chart.series {
        let points: Vec<&Point> = s.points.iter().filter(|p| drawable(p)).collect();
        if points.is_empty() {
            continue;
        }
        let coords: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", plot.x(&chart.x.scale, p.x), plot.y(&chart.y.scale, p.y)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="series" points="{}" fill="none" stroke="{}" stroke-width="2" stroke-opacity="{:.2}" stroke-dasharray="{}" stroke-linejoin="round"><title>{}</title></polyline>"#,
            coords.join(" "),
            s.colour,
            s.opacity,
            s.dash,
            esc(&s.label)
        );
        if s.markers {
            for p in &points {
                draw_point(&mut out, &plot, chart, s.colour, p);
            }
        }
    }
    canvas::legend(&mut out, plot.right + 16.0, plot.top + 4.0, &legend);
    canvas::close(&mut out);
    Some(out)
}

fn draw_point(out: &mut String, plot: &Plot, chart: &LineChart, colour: &str, p: &Point) {
    let (x, y) = (plot.x(&chart.x.scale, p.x), plot.y(&chart.y.scale, p.y));
    if let Some((lo, hi)) = p.interval.filter(|(lo, hi)| hi > lo) {
        canvas::whisker(out, x, plot.y(&chart.y.scale, lo), plot.y(&chart.y.scale, hi), &p.tooltip);
    }
    let _ = write!(
        out,
        r##"<circle class="point" cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{colour}" stroke="#fff" stroke-width="1"><title>{}</title></circle>"##,
        esc(&p.tooltip)
    );
}

/// Ticks labelled by `label` at every tick of `scale`.
pub fn axis(scale: Scale, title: String, label: impl Fn(f64) -> String) -> Axis {
    let ticks = scale.ticks().into_iter().map(|t| (t, label(t))).collect();
    Axis { scale, ticks, title }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> Point {
        Point { x, y, interval: Some((y * 0.9, y * 1.1)), tooltip: String::new() }
    }

    #[test]
    fn a_polyline_per_series_with_points_and_whiskers_and_no_zero_on_a_log_axis() {
        let series = |label: &str, points| Series {
            label: label.into(),
            colour: "#000000",
            dash: "",
            opacity: 1.0,
            markers: true,
            points,
        };
        let chart = LineChart {
            kind: "sweep",
            title: "t".into(),
            desc: "d".into(),
            x: axis(Scale::log(10.0, 1000.0), "x".into(), |v| v.to_string()),
            y: axis(Scale::log(1.0, 100.0), "y".into(), |v| v.to_string()),
            series: vec![
                series("a", vec![point(10.0, 2.0), point(100.0, 0.0), point(1000.0, 50.0)]),
                series("b", vec![point(10.0, 3.0)]),
            ],
        };
        let svg = render(&chart).unwrap();
        assert_eq!(svg.matches(r#"<polyline class="series""#).count(), 2);
        assert_eq!(svg.matches(r#"class="point""#).count(), 3, "y = 0 has no place on a log axis");
        assert_eq!(svg.matches(r#"class="whisker""#).count(), 3);
        assert_eq!(svg.matches(r#"class="tick""#).count(), 7 + 7, "1, 2, 5 per decade over two decades");
    }
}
