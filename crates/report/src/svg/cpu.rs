//! CPU per call on both sides of every cell: a client bar and a server bar per cell, whiskers for
//! the 95% interval (in-process cells have no server side).

use super::bars::{self, BarChart, Group, Slot};
use super::ctx::Ctx;
use super::headline::slot;
use super::palette::{CLIENT, SERVER};
use callbench_results::format::{self, DisplayUnit};
use callbench_results::model::Cell;

const SIDES: [(&str, &str, &str); 2] =
    [("client", "client_cpu_us_per_call", CLIENT), ("server", "server_cpu_us_per_call", SERVER)];

pub fn chart(ctx: &Ctx) -> Option<String> {
    let unit = DisplayUnit { divisor: 1.0, unit: "CPU-µs/call" };
    let groups: Vec<Group> = ctx
        .cells
        .iter()
        .filter(|c| SIDES.iter().any(|(_, m, _)| c.summary.contains_key(*m)))
        .map(|c| Group {
            label: label(ctx, c),
            slots: SIDES
                .iter()
                .map(|(_, m, _)| if c.summary.contains_key(*m) { slot(ctx, c, m, unit) } else { Slot::Absent })
                .collect(),
        })
        .collect();
    bars::render(&BarChart {
        kind: "cpu",
        title: ctx.title("CPU per call, client and server"),
        desc: "For each cell, the CPU time the client (callbench's load engine, or the tool that made the calls) and the server spent per call: median of the repetitions, whiskers for the 95% interval.".into(),
        y_title: "CPU per call (CPU-µs/call)".into(),
        x_title: match &ctx.exp.sweep {
            Some(sweep) => format!("server, {sweep}"),
            None => "server, workload".into(),
        },
        series: SIDES.iter().map(|(side, _, colour)| (side.to_string(), *colour)).collect(),
        groups,
        percent: false,
        ceiling: None,
    })
}

/// Short labels keep the groups narrow: the server, then the swept value or the workload.
fn label(ctx: &Ctx, cell: &Cell) -> Vec<String> {
    let mut lines = vec![ctx.series(cell)];
    match cell.x.filter(|_| ctx.exp.sweep.is_some()) {
        Some(x) => {
            lines.push(format::swept(x));
            if ctx.workloads.len() > 1 {
                lines.push(cell.workload.clone());
            }
        }
        None => lines.push(cell.workload.clone()),
    }
    lines
}
