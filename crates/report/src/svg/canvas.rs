//! The parts every chart shares: the `<svg>` element with its accessible title, the plot area,
//! axes with ticks and titles, and the legend. Class names are stable (tests count them):
//! `chart` (the svg), `axis`, `grid`, `tick`, `legend`.

use super::scale::Scale;
use crate::escape::html as esc;
use std::fmt::Write;

pub const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
/// Average glyph width at 11 px, to size margins without measuring text.
const CHAR_WIDTH: f64 = 6.2;

pub fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

/// Where the data is drawn inside the chart, in px.
#[derive(Debug, Clone, Copy)]
pub struct Plot {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Plot {
    pub fn width(&self) -> f64 {
        self.right - self.left
    }
    pub fn x(&self, scale: &Scale, v: f64) -> f64 {
        self.left + scale.fraction(v) * self.width()
    }
    pub fn y(&self, scale: &Scale, v: f64) -> f64 {
        self.bottom - scale.fraction(v) * (self.bottom - self.top)
    }
}

/// Opens a chart: `kind` names what it shows (`headline`, `spectrum`...), `title` is both the
/// visible heading and the accessible name, `desc` says in words what is plotted.
pub fn open(out: &mut String, kind: &str, title: &str, desc: &str, width: f64, height: f64) {
    let _ = write!(
        out,
        r#"<svg class="chart" data-kind="{kind}" xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width:.0} {height:.0}" width="{width:.0}" height="{height:.0}" font-family="{FONT}" font-size="11">"#,
        kind = esc(kind),
    );
    let _ = write!(out, "<title>{}</title><desc>{}</desc>", esc(title), esc(desc));
    let _ = write!(
        out,
        r##"<rect class="background" x="0" y="0" width="{width:.0}" height="{height:.0}" fill="#ffffff"/>"##
    );
    let _ = write!(
        out,
        r##"<text class="chart-title" x="12" y="20" font-size="13" font-weight="600" fill="#222">{}</text>"##,
        esc(title)
    );
}

pub fn close(out: &mut String) {
    out.push_str("</svg>");
}

/// The y axis at the plot's left: grid lines, tick labels and the title, rotated.
pub fn y_axis(out: &mut String, plot: &Plot, scale: &Scale, ticks: &[(f64, String)], title: &str) {
    out.push_str(r#"<g class="axis y-axis">"#);
    for (t, label) in ticks {
        let y = plot.y(scale, *t);
        let _ = write!(
            out,
            r##"<line class="grid" x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e3e3e3"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end" fill="#444">{}</text>"##,
            plot.left,
            plot.right,
            plot.left - 6.0,
            y + 3.5,
            esc(label)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{l:.1}" x2="{l:.1}" y1="{:.1}" y2="{:.1}" stroke="#888"/>"##,
        plot.top,
        plot.bottom,
        l = plot.left
    );
    let (cx, cy) = (14.0, (plot.top + plot.bottom) / 2.0);
    let _ = write!(
        out,
        r##"<text class="axis-title" x="{cx}" y="{cy:.1}" transform="rotate(-90 {cx} {cy:.1})" text-anchor="middle" fill="#222">{}</text></g>"##,
        esc(title)
    );
}

/// The x axis along the plot's bottom with labelled ticks at the given values.
pub fn x_axis(out: &mut String, plot: &Plot, scale: &Scale, ticks: &[(f64, String)], title: &str) {
    out.push_str(r#"<g class="axis x-axis">"#);
    baseline(out, plot);
    for (v, label) in ticks {
        let x = plot.x(scale, *v);
        let _ = write!(
            out,
            r##"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#eeeeee"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
            plot.top,
            plot.bottom,
            plot.bottom + 15.0,
            esc(label)
        );
    }
    x_title(out, plot, plot.bottom + 32.0, title);
    out.push_str("</g>");
}

pub fn baseline(out: &mut String, plot: &Plot) {
    let _ = write!(
        out,
        r##"<line x1="{:.1}" x2="{:.1}" y1="{b:.1}" y2="{b:.1}" stroke="#888"/>"##,
        plot.left,
        plot.right,
        b = plot.bottom
    );
}

pub fn x_title(out: &mut String, plot: &Plot, y: f64, title: &str) {
    let _ = write!(
        out,
        r##"<text class="axis-title" x="{:.1}" y="{y:.1}" text-anchor="middle" fill="#222">{}</text>"##,
        (plot.left + plot.right) / 2.0,
        esc(title)
    );
}

/// How a legend entry is drawn: a filled square (bars) or a line sample (series).
#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub label: String,
    pub colour: &'static str,
    /// None: a square swatch; Some(dasharray, empty for solid): a line sample.
    pub line: Option<&'static str>,
    pub opacity: f64,
}

/// The width a legend of these entries needs at the chart's right.
pub fn legend_width(entries: &[LegendEntry]) -> f64 {
    entries.iter().map(|e| text_width(&e.label)).fold(0.0, f64::max) + 44.0
}

/// The height of that legend (the chart grows to hold it).
pub fn legend_height(entries: &[LegendEntry]) -> f64 {
    entries.len() as f64 * LEGEND_LINE + 8.0
}

const LEGEND_LINE: f64 = 17.0;

/// The legend, one entry per line, from (`x`, `y`).
pub fn legend(out: &mut String, x: f64, y: f64, entries: &[LegendEntry]) {
    out.push_str(r#"<g class="legend">"#);
    for (i, e) in entries.iter().enumerate() {
        let y = y + i as f64 * LEGEND_LINE;
        match e.line {
            None => {
                let _ =
                    write!(out, r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/>"#, y - 9.0, e.colour);
            }
            Some(dash) => {
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-opacity="{:.2}" stroke-width="2.5" stroke-dasharray="{dash}"/>"#,
                    x + 22.0,
                    y - 3.0,
                    y - 3.0,
                    e.colour,
                    e.opacity
                );
            }
        }
        let tx = x + if e.line.is_some() { 28.0 } else { 18.0 };
        let _ = write!(out, r##"<text x="{tx:.1}" y="{y:.1}" fill="#222">{}</text>"##, esc(&e.label));
    }
    out.push_str("</g>");
}

/// A vertical 95% interval with caps, centred on `x`.
pub fn whisker(out: &mut String, x: f64, y_lo: f64, y_hi: f64, tooltip: &str) {
    let _ = write!(
        out,
        r##"<path class="whisker" d="M{x:.1} {y_lo:.1}V{y_hi:.1}M{:.1} {y_lo:.1}H{:.1}M{:.1} {y_hi:.1}H{:.1}" stroke="#222" stroke-width="1.2" fill="none"><title>{}</title></path>"##,
        x - 4.0,
        x + 4.0,
        x - 4.0,
        x + 4.0,
        esc(tooltip)
    );
}
