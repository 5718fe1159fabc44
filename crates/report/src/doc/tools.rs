//! An experiment whose calls other load tools made (`clients`): per tool, what it claimed, what the
//! server says it answered, what the tool cost its own CPU, and which side was the limit — then one
//! sentence per tool saying why its number is what it is.

use super::blocks::{Block, Table};
use super::cells::mark;
use crate::names;
use callbench_results::format::{self, MISSING};
use callbench_results::model::{Cell, Experiment, Results};

/// The section, when the experiment names clients.
pub fn section(r: &Results, exp: &Experiment) -> Vec<Block> {
    let cells: Vec<&Cell> =
        r.cells.iter().filter(|c| c.experiment == exp.id && c.params.contains_key("client")).collect();
    if cells.is_empty() {
        return vec![];
    }
    let cpus = r.environment.client_cpus.len().max(1);
    let counted = cells.iter().any(|c| c.runs.iter().any(|r| r.outside.is_some()));
    let wire = if counted { COUNTED } else { NOT_COUNTED };
    let mut blocks = vec![
        Block::Subheading(format!("{}: what each tool claimed, and what happened", exp.title)),
        Block::Paragraph(format!("{EXPLAINED} {wire} The client had {}.", cpu_count(cpus))),
        Block::Table(table(exp, &cells, cpus)),
    ];
    let sentences: Vec<String> = cells.iter().filter_map(|c| sentence(c, cpus)).collect();
    if !sentences.is_empty() {
        blocks.push(Block::List(sentences));
    }
    blocks
}

const EXPLAINED: &str = "Throughput and latencies are each tool's own claims (callbench's are its engine's). The server's count is the calls it says it answered while the tool ran (servers that keep no count show –); the tool's CPU is measured from outside it (its whole process tree), as a share of the client's CPUs.";

const COUNTED: &str = "Connections and IP bytes per call (headers, handshakes and ACKs included) were counted by the kernel of the network namespace each client ran alone in, not by the client.";

const NOT_COUNTED: &str = "Connections and bytes were not counted outside the clients: that needs each client in a network namespace of its own, which needs root.";

fn cpu_count(n: usize) -> String {
    if n == 1 {
        "one CPU".into()
    } else {
        format!("{n} CPUs")
    }
}

fn client(cell: &Cell) -> &str {
    cell.params.get("client").and_then(|v| v.as_str()).unwrap_or("callbench")
}

fn median(cell: &Cell, metric: &str) -> Option<f64> {
    cell.summary.get(metric).map(|e| e.median)
}

/// Calls the server answered beyond those the tool counted (ok and failed), over all repetitions;
/// None when the server keeps no count.
fn unclaimed(cell: &Cell) -> Option<i64> {
    let mut total = 0i64;
    for run in &cell.runs {
        let answered = run.peer.as_ref()?.server_answered? as i64;
        total += answered - (run.calls_ok + run.calls_errors) as i64;
    }
    (!cell.runs.is_empty()).then_some(total)
}

fn table(exp: &Experiment, cells: &[&Cell], cpus: usize) -> Table {
    let mut columns: Vec<(&str, bool)> = vec![("tool", false), ("server", false), ("workload", false)];
    if let Some(sweep) = &exp.sweep {
        columns.push((sweep.as_str(), true));
    }
    columns.extend([
        ("claimed calls/s", true),
        ("server answered beyond its count", true),
        ("p50 / p99 claimed", true),
        ("tool CPU per call", true),
        ("tool CPU used", true),
        ("connections", true),
        ("IP bytes/call out / in", true),
        ("server CPU used", true),
        ("limit", false),
    ]);
    let (mut table, width) = (Table::new(&columns), columns.len());
    for cell in cells {
        let mut row = vec![client(cell).to_string(), server_of(cell), cell.workload.clone()];
        if exp.sweep.is_some() {
            row.push(names::swept_value(Some(exp), cell).unwrap_or_else(|| MISSING.into()));
        }
        if cell.runs.is_empty() {
            row.push(names::status_with_error(cell));
            row.resize(width, MISSING.into());
            table.push(row, mark(cell));
            continue;
        }
        let share =
            |cores: Option<f64>, of: usize| cores.map_or(MISSING.into(), |c| format!("{:.0}%", c / of as f64 * 100.0));
        let latency = match (median(cell, "latency_p50_us"), median(cell, "latency_p99_us")) {
            (Some(a), Some(b)) => format!("{} / {}", format::duration_us(a), format::duration_us(b)),
            _ => MISSING.into(),
        };
        row.extend([
            median(cell, "throughput_per_s").map_or(MISSING.into(), format::count),
            unclaimed(cell).map_or(MISSING.into(), |n| format!("{n:+}")),
            latency,
            median(cell, "client_cpu_us_per_call").map_or(MISSING.into(), format::duration_us),
            share(median(cell, "client_cpu_cores"), cpus),
            connections(cell),
            ip_bytes(cell),
            median(cell, "server_cpu_cores").map_or(MISSING.into(), |c| format!("{:.0}% of a core", c * 100.0)),
            cell.bottleneck.clone(),
        ]);
        table.push(row, mark(cell));
    }
    table
}

/// The connections the client's namespace counted over each run: the median over repetitions.
fn connections(cell: &Cell) -> String {
    let mut counts: Vec<u64> =
        cell.runs.iter().filter_map(|r| r.outside.as_ref()).map(|o| o.connections_opened).collect();
    counts.sort_unstable();
    match counts.get(counts.len() / 2) {
        Some(n) if counts.len() == cell.runs.len() => n.to_string(),
        _ => MISSING.into(),
    }
}

fn ip_bytes(cell: &Cell) -> String {
    match (median(cell, "ip_sent_per_call"), median(cell, "ip_received_per_call")) {
        (Some(out), Some(back)) => format!("{} / {}", format::count(out), format::count(back)),
        _ => MISSING.into(),
    }
}

/// The server the tool called (`rust-actix+h2` from `wrk+rust-actix+h2`).
fn server_of(cell: &Cell) -> String {
    let label = &cell.server;
    label.strip_prefix(&format!("{}+", client(cell))).unwrap_or(label).to_string()
}

/// Why the tool's number is what it is, in one sentence.
pub fn sentence(cell: &Cell, cpus: usize) -> Option<String> {
    let tool = client(cell);
    if cell.runs.is_empty() {
        return Some(format!("{tool}: {}.", names::status_with_error(cell)));
    }
    let throughput = median(cell, "throughput_per_s")?;
    let cpu = median(cell, "client_cpu_us_per_call")?;
    let busy = median(cell, "client_cpu_cores").unwrap_or(0.0) / cpus as f64 * 100.0;
    let server = median(cell, "server_cpu_cores").map(|c| c * 100.0);
    let why = match cell.bottleneck.as_str() {
        "client" => format!("client-bound: it used {busy:.0}% of the client's {}, {} of CPU per call", cpu_count(cpus), format::duration_us(cpu)),
        "server" => format!(
            "server-bound: the server used {:.0}% of its core; the tool {busy:.0}% of its own at {} per call",
            server.unwrap_or(0.0),
            format::duration_us(cpu)
        ),
        "both" => format!("both sides were busy: the tool {busy:.0}% of its CPU at {} per call, the server {:.0}%", format::duration_us(cpu), server.unwrap_or(0.0)),
        // callbench's precise clock spins through the last 2 ms before each start: at a rate, its
        // busy core is pacing, and reading it as the cost of a call would rank it last.
        _ if tool == "callbench" && cell.runs.iter().any(|r| r.rate_requested.is_some()) => format!(
            "neither side was the limit (the server used {:.0}% of its core): callbench's clock spins to start each call on time, so the {busy:.0}% of its CPU it used ({} per call) is pacing, not what a call costs it",
            server.unwrap_or(0.0),
            format::duration_us(cpu)
        ),
        _ => format!(
            "neither side was busy (the tool {busy:.0}%, the server {:.0}%): its calls waited on each other or on a pace, {} of CPU per call",
            server.unwrap_or(0.0),
            format::duration_us(cpu)
        ),
    };
    let mut text = format!("{tool}: {} calls/s — {why}", format::count(throughput));
    match unclaimed(cell) {
        Some(0) => text.push_str("; the server answered exactly the calls it counted"),
        Some(n) if n > 0 => text.push_str(&format!(
            "; the server answered {n} calls it did not count (over {} repetitions: calls in flight when it stopped, dropped)",
            cell.runs.len()
        )),
        Some(n) => text.push_str(&format!("; it counted {} calls more than the server answered", -n)),
        None => {}
    }
    if let Some(approximated) = cell.params.get("approximated").and_then(|v| v.as_array()) {
        let list: Vec<&str> = approximated.iter().filter_map(|a| a.as_str()).collect();
        if !list.is_empty() {
            text.push_str(&format!(" (approximated: {})", list.join("; ")));
        }
    }
    text.push('.');
    Some(text)
}
