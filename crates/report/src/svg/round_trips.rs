//! Connection set-up, stacked: one horizontal bar per cell, split into the TCP connect, the TLS
//! handshake and the request for calls that opened their own connection (one segment for calls
//! on a kept connection), labelled with the time and, across a delay, the round trips.
//! Classes: `segment` (with `data-phase`), `bar-label`.

use super::canvas::{self, LegendEntry, Plot};
use super::ctx::Ctx;
use super::scale::Scale;
use crate::escape::html as esc;
use crate::round_trips;
use callbench_results::format;
use callbench_results::model::Cell;
use std::fmt::Write;

const PHASES: [(&str, &str); 5] = [
    ("TCP connect", "#0072B2"),
    ("TLS handshake", "#E69F00"),
    ("the request", "#009E73"),
    ("call on a kept connection", "#999999"),
    // A warm cell whose server closed every connection (HTTP/1.0): not a kept one.
    ("call on a connection the server closes", "#CC79A7"),
];
const ROW: f64 = 24.0;
const PLOT_WIDTH: f64 = 460.0;

struct Bar {
    label: String,
    segments: Vec<(&'static str, f64)>,
    total_us: f64,
    rtt_us: Option<f64>,
}

pub fn chart(ctx: &Ctx) -> Option<String> {
    let bars: Vec<Bar> = ctx.cells.iter().filter_map(|c| bar(ctx, c)).collect();
    if bars.is_empty() || !round_trips::shown_for(&ctx.cells) {
        return None;
    }
    let max = bars.iter().map(|b| b.total_us.max(b.segments.iter().map(|s| s.1).sum())).fold(0.0, f64::max);
    let scale = Scale::from_zero(max / 1000.0);
    let legend: Vec<LegendEntry> = PHASES
        .iter()
        .filter(|(name, _)| bars.iter().any(|b| b.segments.iter().any(|s| s.0 == *name)))
        .map(|(name, colour)| LegendEntry { label: name.to_string(), colour, line: None, opacity: 1.0 })
        .collect();
    let label_width = bars.iter().map(|b| canvas::text_width(&b.label)).fold(0.0, f64::max) + 16.0;
    let left = label_width.max(80.0);
    // Room after the longest bar for its `121 ms · 3.0 RTT`.
    let annotation = 120.0;
    let right = left + PLOT_WIDTH;
    let width = right + annotation + canvas::legend_width(&legend);
    let height = (40.0 + ROW * bars.len() as f64 + 44.0).max(canvas::legend_height(&legend) + 60.0);
    let plot = Plot { left, top: 36.0, right, bottom: 36.0 + ROW * bars.len() as f64 + 6.0 };

    let mut out = String::new();
    canvas::open(
        &mut out,
        "setup",
        &ctx.title("connection set-up, phase by phase"),
        "For each cell, its median call: for calls that opened their own connection, split into the medians of the TCP connect, the TLS handshake and the request; across an emulated link with a delay, the label gives the call in round trips of the link's measured RTT.",
        width,
        height,
    );
    let ticks: Vec<(f64, String)> = scale.ticks().into_iter().map(|t| (t, format::compact(t))).collect();
    canvas::x_axis(&mut out, &plot, &scale, &ticks, "time (ms)");
    for (i, b) in bars.iter().enumerate() {
        let y = plot.top + 4.0 + ROW * i as f64;
        let _ = write!(
            out,
            r##"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="end" fill="#222">{}</text>"##,
            left - 8.0,
            y + ROW / 2.0,
            esc(&b.label)
        );
        let mut x_ms = 0.0;
        for (phase, us) in &b.segments {
            let colour = PHASES.iter().find(|p| p.0 == *phase).map_or("#777", |p| p.1);
            let (x0, x1) = (plot.x(&scale, x_ms), plot.x(&scale, x_ms + us / 1000.0));
            let tip = match b.rtt_us {
                Some(rtt) => format!(
                    "{}: {phase} {} ({} RTT)",
                    b.label,
                    format::duration_us(*us),
                    round_trips::in_round_trips(*us, rtt)
                ),
                None => format!("{}: {phase} {}", b.label, format::duration_us(*us)),
            };
            let _ = write!(
                out,
                r#"<rect class="segment" data-phase="{}" x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{}</title></rect>"#,
                esc(phase),
                (x1 - x0).max(0.5),
                ROW - 8.0,
                esc(&tip)
            );
            x_ms += us / 1000.0;
        }
        let mut text = format::duration_us(b.total_us);
        if let Some(rtt) = b.rtt_us {
            text.push_str(&format!(" · {} RTT", round_trips::in_round_trips(b.total_us, rtt)));
        }
        let end = plot.x(&scale, x_ms.max(b.total_us / 1000.0));
        let _ = write!(
            out,
            r##"<text class="bar-label" x="{:.1}" y="{:.1}" fill="#222">{}</text>"##,
            end + 6.0,
            y + ROW / 2.0,
            esc(&text)
        );
    }
    canvas::legend(&mut out, right + annotation, plot.top + 4.0, &legend);
    canvas::close(&mut out);
    Some(out)
}

/// The cell's bar: its phases when every call opened a connection, else its median call.
fn bar(ctx: &Ctx, cell: &Cell) -> Option<Bar> {
    let total_us = cell.summary.get("latency_p50_us").map(|e| e.median)?;
    let segments = match round_trips::phases(cell).filter(|_| round_trips::is_cold(cell)) {
        Some(p) => p.parts(),
        None if cell.network.is_some() && round_trips::closed_by_server(cell) => {
            vec![("call on a connection the server closes", total_us)]
        }
        None if cell.network.is_some() => vec![("call on a kept connection", total_us)],
        None => return None,
    };
    let mut label = ctx.series(cell);
    if let Some(n) = &cell.network {
        label.push_str(&format!(", {}", n.spec));
    }
    if ctx.workloads.len() > 1 {
        label.push_str(&format!(", {}", cell.workload));
    }
    // A swept setting the link's spec does not already show (tls_version, calls, ...) tells bars apart.
    if let (Some(param), Some(value)) = (ctx.exp.sweep.as_deref(), crate::names::swept_value(Some(ctx.exp), cell)) {
        if !label.contains(&format!("{param}=")) {
            label.push_str(&format!(", {param}={value}"));
        }
    }
    Some(Bar { label, segments, total_us, rtt_us: round_trips::round_trip_us(cell) })
}
