//! An experiment's connection set-up: per cell, the link it ran across (with its measured round
//! trip), whether every call opened a connection, the median call and its phases — in time and,
//! across a delay, in round trips — then a sentence per cell saying what a call cost.

use super::blocks::{Block, Table};
use super::cells::mark;
use crate::names;
use crate::round_trips::{self, in_round_trips, Phases};
use callbench_results::format::{self, MISSING};
use callbench_results::model::{Cell, Experiment, Results};

pub fn section(r: &Results, exp: &Experiment) -> Vec<Block> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
    let cells = &cells[..];
    if !round_trips::shown_for(cells) {
        return vec![];
    }
    // Explained once, at the first experiment that has the section.
    let first = r.experiments.iter().find(|e| {
        let theirs: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == e.id).collect();
        round_trips::shown_for(&theirs)
    });
    let explained = match first {
        Some(e) if e.id != exp.id => {
            format!("Times and round trips as explained under “{}: connection set-up and round trips” above.", e.title)
        }
        _ => EXPLAINED.into(),
    };
    let mut blocks = vec![
        Block::Subheading(format!("{}: connection set-up and round trips", exp.title)),
        Block::Paragraph(explained),
        Block::Table(table(exp, cells)),
    ];
    let sentences: Vec<String> = cells.iter().filter_map(|c| round_trips::sentence(r, c)).collect();
    if !sentences.is_empty() {
        blocks.push(Block::List(sentences));
    }
    blocks
}

const EXPLAINED: &str = "A cold call opens its own connection: its time splits into the TCP connect, the TLS handshake and the request (medians over the calls, as curl -w splits a transfer; they need not add up to the median call exactly). Across an emulated link every time is also given in round trips of the link's measured RTT (the configured delay plus the link's own cost, measured before the run).";

fn table(exp: &Experiment, cells: &[&Cell]) -> Table {
    let mut columns: Vec<(&str, bool)> = vec![("server", false), ("transport", false), ("workload", false)];
    if let Some(sweep) = &exp.sweep {
        columns.push((sweep.as_str(), true));
    }
    columns.extend([
        ("link", false),
        ("measured RTT (link alone)", true),
        ("connection", false),
        ("p50 call", true),
        ("TCP connect", true),
        ("TLS handshake", true),
        ("request", true),
    ]);
    let mut table = Table::new(&columns);
    for cell in cells {
        table.push(row(exp, cell), mark(cell));
    }
    table
}

fn row(exp: &Experiment, cell: &Cell) -> Vec<String> {
    let rtt = round_trips::round_trip_us(cell);
    // `121 ms (3.0 RTT)` across a delay, `480 µs` otherwise.
    let time = |us: Option<f64>| match (us, rtt) {
        (Some(us), Some(rtt)) => format!("{} ({} RTT)", format::duration_us(us), in_round_trips(us, rtt)),
        (Some(us), None) => format::duration_us(us),
        (None, _) => MISSING.into(),
    };
    let mut row = vec![cell.server.clone(), cell.transport.clone(), cell.workload.clone()];
    if exp.sweep.is_some() {
        row.push(names::swept_value(Some(exp), cell).unwrap_or_else(|| MISSING.into()));
    }
    let (link, measured) = match &cell.network {
        Some(n) => (
            n.spec.clone(),
            format!("{} ({})", format::duration_us(n.measured_rtt_us), format::duration_us(n.own_rtt_us)),
        ),
        None => ("none (loopback)".into(), MISSING.into()),
    };
    let cold = round_trips::is_cold(cell);
    let phases: Option<Phases> = round_trips::phases(cell).filter(|_| cold);
    row.extend([
        link,
        measured,
        if cold { "new per call".into() } else { "kept".into() },
        time(cell.summary.get("latency_p50_us").map(|e| e.median)),
        time(phases.map(|p| p.tcp_us)),
        time(phases.and_then(|p| p.tls_us)),
        time(phases.map(|p| p.rest_us)),
    ]);
    row
}
