//! The client-bias charts of an experiment whose calls several load tools made: what each tool
//! claimed, with the server's ceiling marked (the most it served in the experiment while it was
//! itself the limit); and which side was busy, the share of the client's CPUs the tool used beside
//! the share of the server's CPUs the server used. A tool near 100% of its CPUs, its bar under the
//! ceiling, measured itself.

use super::bars::{self, BarChart, Group, Slot};
use super::ctx::Ctx;
use super::headline::slot;
use super::palette::{CLIENT, SERVER};
use crate::names;
use callbench_results::format;
use callbench_results::model::{Cell, Estimate};

/// Both charts, when at least two tools made the experiment's calls.
pub fn charts(ctx: &Ctx) -> Vec<String> {
    let tools: Vec<&Cell> = ctx.cells.iter().copied().filter(|c| c.params.contains_key("client")).collect();
    if tools.len() < 2 {
        return vec![];
    }
    [claims(ctx, &tools), busy(ctx, &tools)].into_iter().flatten().collect()
}

fn claims(ctx: &Ctx, tools: &[&Cell]) -> Option<String> {
    let metric = "throughput_per_s";
    let typical = tools.iter().filter_map(|c| c.summary.get(metric)).map(|e| e.median).fold(0.0, f64::max);
    let unit = format::display_unit(metric, typical);
    let groups =
        tools.iter().map(|c| Group { label: label(ctx, c), slots: vec![slot(ctx, c, metric, unit)] }).collect();
    let ceiling = ceiling(tools).map(|(calls, by)| {
        (calls / unit.divisor, format!("the server's ceiling here: {} calls/s (by {by})", format::count(calls)))
    });
    bars::render(&BarChart {
        kind: "tool-claims",
        title: ctx.title("what each tool claimed"),
        desc: format!(
            "For each load tool, the calls per second it reported: median of the repetitions, whiskers for the 95% interval. {}",
            if ceiling.is_some() {
                "The dashed line is the most calls per second the server served in this experiment while it was itself the limit (its CPU busy, the tool's not)."
            } else {
                "No tool made the server the limit here, so no ceiling is marked."
            }
        ),
        y_title: names::metric_title(metric, unit.unit),
        x_title: "tool".into(),
        series: vec![("claimed by the tool".into(), CLIENT)],
        groups,
        percent: false,
        ceiling,
    })
}

/// The highest throughput of a server-bound cell, and its tool — only when every tool called
/// the same server with the same work (else there is no one ceiling).
fn ceiling(tools: &[&Cell]) -> Option<(f64, String)> {
    let first = tools.first()?;
    let same = tools.iter().all(|c| server_of(c) == server_of(first) && c.workload == first.workload && c.x == first.x);
    if !same {
        return None;
    }
    tools
        .iter()
        .filter(|c| c.bottleneck == "server")
        .filter_map(|c| Some((c.summary.get("throughput_per_s")?.median, tool(c))))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

fn busy(ctx: &Ctx, tools: &[&Cell]) -> Option<String> {
    let client_cpus = ctx.r.environment.client_cpus.len().max(1) as f64;
    let server_cpus = ctx.r.environment.server_cpus.len().max(1) as f64;
    let groups = tools
        .iter()
        .map(|c| Group {
            label: label(ctx, c),
            slots: vec![
                share(ctx, c, "client_cpu_cores", client_cpus, "the tool"),
                share(ctx, c, "server_cpu_cores", server_cpus, "the server"),
            ],
        })
        .collect();
    bars::render(&BarChart {
        kind: "tools",
        title: ctx.title("which side was busy, tool by tool"),
        desc: "For each load tool: the share of the client's CPUs its whole process tree used (measured from outside it) and the share of the server's CPUs the server used, medians of the repetitions with 95% whiskers. A tool near 100% with the server below it was the limit: its figure measures the tool.".into(),
        y_title: "CPU used (% of that side's CPUs)".into(),
        x_title: "tool".into(),
        series: vec![("the tool (client CPUs)".into(), CLIENT), ("the server (server CPUs)".into(), SERVER)],
        groups,
        percent: true,
        ceiling: None,
    })
}

fn tool(cell: &Cell) -> String {
    cell.params.get("client").and_then(|v| v.as_str()).unwrap_or("callbench").to_string()
}

/// `rust-actix+h2` from `wrk+rust-actix+h2`.
fn server_of(cell: &Cell) -> &str {
    let tool = tool(cell);
    cell.server.strip_prefix(tool.as_str()).and_then(|s| s.strip_prefix('+')).unwrap_or(&cell.server)
}

/// `wrk`, then what else tells cells apart: the server when several, the swept value or workload.
fn label(ctx: &Ctx, cell: &Cell) -> Vec<String> {
    let mut lines = vec![tool(cell)];
    let servers: Vec<&str> = ctx.cells.iter().map(|c| server_of(c)).collect();
    if servers.iter().any(|s| *s != server_of(cell)) {
        lines.push(server_of(cell).to_string());
    }
    match names::swept_value(Some(ctx.exp), cell) {
        Some(x) => lines.push(x),
        None if ctx.workloads.len() > 1 => lines.push(cell.workload.clone()),
        None => {}
    }
    lines
}

/// A side's cores as a percentage of its CPUs.
fn share(ctx: &Ctx, cell: &Cell, metric: &str, cpus: f64, side: &str) -> Slot {
    let title = names::cell_title(ctx.r, cell);
    match cell.summary.get(metric) {
        Some(Estimate { median, lo, hi, .. }) => {
            let pct = |v: &f64| v / cpus * 100.0;
            Slot::Value {
                median: pct(median),
                lo: pct(lo),
                hi: pct(hi),
                tooltip: format!("{title}: {side} used {}% of its CPUs", format::count(pct(median))),
            }
        }
        None => Slot::Missing { tooltip: format!("{title}: no figure ({})", names::status_with_error(cell)) },
    }
}
