//! One experiment's section: what it asks, and a row per cell (failed cells included, with why).

use super::blocks::{Block, RowMark, Table};
use crate::names;
use callbench_results::format::{self, MISSING};
use callbench_results::model::{Cell, Experiment, Results};

pub fn experiment(r: &Results, exp: &Experiment) -> Vec<Block> {
    let mut blocks = vec![Block::Heading(exp.title.clone())];
    if !exp.description.trim().is_empty() {
        blocks.push(Block::Paragraph(exp.description.clone()));
    }
    blocks.push(Block::Paragraph(facts(exp)));
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
    if let Some(text) = cluster(&cells) {
        blocks.push(Block::Paragraph(text));
    }
    if cells.is_empty() {
        blocks.push(Block::Paragraph("No cell of this experiment was measured.".into()));
        return blocks;
    }
    blocks.push(Block::Table(table(exp, &cells)));
    blocks.push(Block::Charts(exp.id.clone()));
    blocks
}

/// `Experiment sequential · seeds 000, 003 · headline: p50 latency · swept: connections`.
fn facts(exp: &Experiment) -> String {
    let mut parts = vec![format!("Experiment {}", exp.id)];
    if !exp.seeds.is_empty() {
        parts.push(format!("seed articles {}", exp.seeds.join(", ")));
    }
    parts.push(format!("headline: {}", names::metric_label(&exp.headline)));
    if let Some(sweep) = &exp.sweep {
        parts.push(format!("swept: {sweep}"));
    }
    if let Some(cpus) = &exp.cpus {
        let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
        parts.push(format!(
            "client on CPUs {}, servers on CPUs {} (not the run's)",
            list(&cpus.client),
            list(&cpus.server)
        ));
    }
    parts.join(" · ")
}

/// How a cluster made the calls, when one did: the figures are merged from its workers.
fn cluster(cells: &[&Cell]) -> Option<String> {
    let runs: Vec<_> = cells.iter().flat_map(|c| &c.runs).filter_map(|r| r.cluster.as_ref()).collect();
    let first = runs.first()?;
    let skew = runs.iter().map(|c| c.start_skew_ms).fold(0.0, f64::max);
    let behind = runs.iter().filter(|c| !c.behind_schedule.is_empty()).count();
    let mut text = format!(
        "Calls made by {} workers of the Ray cluster at {}, each its exact share of every run; latencies from their \
         histograms added, counts and CPU summed (client CPU per call: all workers' together). The workers' first \
         calls were at most {skew:.2} ms apart.",
        first.workers, first.ray
    );
    if behind > 0 {
        text.push_str(&format!(
            " In {behind} repetition(s) a worker fell behind its share: the client side was the limit."
        ));
    }
    let remade: Vec<_> = runs.iter().filter(|c| !c.remade_for_skew.is_empty()).collect();
    if !remade.is_empty() {
        let set_aside: usize = remade.iter().map(|c| c.remade_for_skew.len()).sum();
        text.push_str(&format!(
            " {} repetition(s) were made again because the workers started further apart than the limit \
             ({set_aside} run(s) set aside).",
            remade.len()
        ));
    }
    Some(text)
}

fn table(exp: &Experiment, cells: &[&Cell]) -> Table {
    if cells.iter().all(|c| c.transport == "process") {
        return processing_table(exp, cells);
    }
    let pooled = !cells.is_empty() && cells.iter().all(|c| c.pooled.contains(&exp.headline));
    let estimator = if pooled { "all repetitions' calls" } else { "median" };
    let headline = format!("{}: {estimator} [95% interval]", names::metric_label(&exp.headline));
    let mut columns: Vec<(&str, bool)> = vec![("server", false), ("transport", false), ("workload", false)];
    if let Some(sweep) = &exp.sweep {
        columns.push((sweep.as_str(), true));
    }
    columns.extend([
        (headline.as_str(), true),
        ("throughput (calls/s)", true),
        ("p50", true),
        ("p99", true),
        ("client CPU (µs/call)", true),
        ("server CPU (µs/call)", true),
        ("server CPU (cores)", true),
        ("wire B/call sent / received", true),
    ]);
    let lossy = cells.iter().any(|c| crossed_loss(c));
    if lossy {
        columns.push((LOST_COLUMN, true));
    }
    columns.extend([("bottleneck", false), ("noisy / disturbed", false), ("status", false)]);
    let mut table = Table::new(&columns);
    for cell in cells {
        let mut row = row(exp, cell);
        if lossy {
            row.insert(row.len() - 3, lost(cell).unwrap_or_else(|| MISSING.into()));
        }
        table.push(row, mark(cell));
    }
    table
}

const LOST_COLUMN: &str = "link lost up / down; resent (per run)";

/// Whether the cell ran across a link that was set to lose packets, or lost some.
fn crossed_loss(cell: &Cell) -> bool {
    cell.runs.iter().any(|r| r.link.is_some_and(|l| l.lost > 0))
        || cell.network.as_ref().is_some_and(|n| n.spec.contains("loss"))
}

/// What the link dropped each way in a run (medians of the repetitions), and how the client's
/// transport took it: TCP segments its kernel sent again, or packets its QUIC stack declared lost.
/// None when the cell crossed no link that counted.
fn lost(cell: &Cell) -> Option<String> {
    let median = |m: &str| cell.summary.get(m).map(|e| e.median);
    let (up, down) = (median("link_lost_up")?, median("link_lost_down")?);
    let mut text = format!("{up:.0} / {down:.0}");
    match (median("quic_packets_lost"), median("tcp_retransmitted")) {
        (Some(lost), _) => text.push_str(&format!("; QUIC {lost:.0} packets")),
        (None, Some(resent)) => text.push_str(&format!("; TCP {resent:.0} segments")),
        (None, None) => {}
    }
    Some(text)
}

fn row(exp: &Experiment, cell: &Cell) -> Vec<String> {
    let median = |m: &str| cell.summary.get(m).map(|e| e.median);
    let shown = |m: &str| median(m).map_or(MISSING.into(), |v| format::value(m, v));
    let mut row = vec![cell.server.clone(), cell.transport.clone(), cell.workload.clone()];
    if exp.sweep.is_some() {
        row.push(names::swept_value(Some(exp), cell).unwrap_or_else(|| MISSING.into()));
    }
    row.push(cell.summary.get(&exp.headline).map_or(MISSING.into(), |e| format::estimate(&exp.headline, e)));
    row.extend([
        shown("throughput_per_s"),
        shown("latency_p50_us"),
        shown("latency_p99_us"),
        shown("client_cpu_us_per_call"),
        shown("server_cpu_us_per_call"),
        shown("server_cpu_cores"),
        format!("{} / {}", shown("wire_sent_per_call"), shown("wire_received_per_call")),
        if cell.bottleneck.is_empty() { MISSING.into() } else { cell.bottleneck.clone() },
        trust(cell),
        names::status_with_error(cell),
    ]);
    row
}

/// Processing cells (one program timing its own work): iteration times, the process's CPU and
/// memory; no client, no wire.
fn processing_table(exp: &Experiment, cells: &[&Cell]) -> Table {
    let headline = format!("{}: median [95% interval]", names::metric_label(&exp.headline));
    let mut columns: Vec<(&str, bool)> = vec![("program", false), ("language", false)];
    if let Some(sweep) = &exp.sweep {
        columns.push((sweep.as_str(), true));
    }
    columns.extend([
        (headline.as_str(), true),
        ("iteration p50", true),
        ("iteration p99", true),
        ("process CPU (cold)", true),
        ("peak RSS (KiB)", true),
        ("noisy", false),
        ("status", false),
    ]);
    let mut table = Table::new(&columns);
    for cell in cells {
        let shown = |m: &str| cell.summary.get(m).map_or(MISSING.into(), |e| format::value(m, e.median));
        let mut row =
            vec![cell.server.clone(), cell.params.get("language").and_then(|v| v.as_str()).unwrap_or("").to_string()];
        if exp.sweep.is_some() {
            row.push(names::swept_value(Some(exp), cell).unwrap_or_else(|| MISSING.into()));
        }
        row.push(cell.summary.get(&exp.headline).map_or(MISSING.into(), |e| format::estimate(&exp.headline, e)));
        row.extend([
            shown("latency_p50_us"),
            shown("latency_p99_us"),
            shown("server_cpu_us_per_call"),
            shown("server_rss_peak_kib"),
            if cell.noisy { "noisy".into() } else { String::new() },
            names::status_with_error(cell),
        ]);
        table.push(row, mark(cell));
    }
    table
}

/// `noisy`, `disturbed: 2 of 9 repetitions disturbed: 36% of the server CPUs used by other
/// processes`, both, or nothing; with the re-runs when there were any.
pub fn trust(cell: &Cell) -> String {
    let mut parts = vec![];
    if cell.noisy {
        parts.push("noisy".to_string());
    }
    if let Some(why) = &cell.disturbed {
        parts.push(format!("disturbed: {why}"));
    }
    if cell.reruns > 0 {
        parts.push(format!("{} re-run", cell.reruns));
    }
    parts.join("; ")
}

pub fn mark(cell: &Cell) -> RowMark {
    if names::is_failure(cell.status) {
        RowMark::Failed
    } else if cell.noisy || cell.disturbed.is_some() {
        RowMark::Noisy
    } else {
        RowMark::Normal
    }
}
