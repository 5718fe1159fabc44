//! What `callbench run` prints as each experiment ends: one line per cell with the headline figure
//! and its interval, both sides' CPU per call and the bottleneck, then the comparisons.

use callbench_results::format;
use callbench_results::model::{CellStatus, Results};

pub fn experiment_table(r: &Results, experiment: &str) -> String {
    let Some(e) = r.experiment(experiment) else { return String::new() };
    let mut out = format!("\n{}\n", e.title);
    // Processing cells time one program: its CPU and memory instead of two sides' CPU.
    let processing = r.cells.iter().any(|c| c.experiment == experiment && c.transport == "process");
    let (left, right) = if processing { ("CPU/call", "peak RSS") } else { ("client CPU", "server CPU") };
    out += &format!("  {:<44} {:>38} {:>12} {:>12} {:>10}\n", "cell", short(&e.headline), left, right, "bottleneck");
    for c in r.cells.iter().filter(|c| c.experiment == experiment) {
        let name = c.id.strip_prefix(&format!("{experiment}/")).unwrap_or(&c.id);
        if !matches!(c.status, CellStatus::Ok | CellStatus::Partial) && c.runs.is_empty() {
            out += &format!("  {name:<44} {:?}: {}\n", c.status, c.error.as_deref().unwrap_or(""));
            continue;
        }
        let cpu = |m: &str| c.summary.get(m).map(|e| format!("{:.1} µs", e.median)).unwrap_or_else(|| "-".into());
        let (left, right) = if processing {
            let median = |m: &str| c.summary.get(m).map(|e| e.median);
            (
                median("server_cpu_us_per_call").map_or("-".into(), |v| format!("{:.1} ms", v / 1000.0)),
                median("server_rss_peak_kib").map_or("-".into(), |v| format!("{:.0} MiB", v / 1024.0)),
            )
        } else {
            (cpu("client_cpu_us_per_call"), cpu("server_cpu_us_per_call"))
        };
        out += &format!(
            "  {name:<44} {:>38} {:>12} {:>12} {:>10}{}{}{}\n",
            c.summary.get(&e.headline).map(|v| format::estimate(&e.headline, v)).unwrap_or_else(|| "-".into()),
            left,
            right,
            c.bottleneck,
            if c.noisy { "  noisy" } else { "" },
            c.disturbed.as_deref().map(|d| format!("  disturbed ({d})")).unwrap_or_default(),
            match (&c.status, &c.error) {
                (CellStatus::Ok, _) => String::new(),
                (s, e) => format!("  {s:?}: {}", e.as_deref().unwrap_or("")),
            }
        );
    }
    let comparisons: Vec<_> =
        r.comparisons.iter().filter(|c| c.experiment == experiment && c.metric == e.headline).collect();
    // Many servers make many pairs: the terminal keeps the table readable, the report has them all.
    if comparisons.len() > 12 {
        out += &format!("  {} pairwise comparisons with intervals: see report.md\n", comparisons.len());
        return out;
    }
    for cmp in comparisons {
        let strip = |id: &str| id.strip_prefix(&format!("{experiment}/")).unwrap_or(id).to_string();
        let ratio = if cmp.exact { format::ratio_value(cmp.ratio.median) } else { format::ratio(&cmp.ratio) };
        out += &format!("  {} / {}: {ratio} — {}\n", strip(&cmp.a), strip(&cmp.b), cmp.verdict);
    }
    out
}

fn short(metric: &str) -> &str {
    match metric {
        "throughput_per_s" => "throughput",
        "latency_p50_us" => "p50",
        "latency_p90_us" => "p90",
        "latency_p99_us" => "p99",
        "latency_p99.9_us" => "p99.9",
        "wall_us_per_call" => "time per call",
        other => other,
    }
}
