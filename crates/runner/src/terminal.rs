//! What `callbench run` prints as each experiment ends: one line per cell with the headline figure
//! and its interval, both sides' CPU per call and the bottleneck, then the comparisons.

use callbench_report::model::{CellStatus, Estimate, Results};

pub fn experiment_table(r: &Results, experiment: &str) -> String {
    let Some(e) = r.experiment(experiment) else { return String::new() };
    let mut out = format!("\n{}\n", e.title);
    let unit = unit_of(&e.headline);
    // Processing cells time one program: its CPU and memory instead of two sides' CPU.
    let processing = r.cells.iter().any(|c| c.experiment == experiment && c.transport == "process");
    let (left, right) = if processing { ("CPU/call", "peak RSS") } else { ("client CPU", "server CPU") };
    out += &format!(
        "  {:<44} {:>26} {:>12} {:>12} {:>10}\n",
        "cell",
        format!("{} ({unit})", short(&e.headline)),
        left,
        right,
        "bottleneck"
    );
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
            "  {name:<44} {:>26} {:>12} {:>12} {:>10}{}{}{}\n",
            c.summary.get(&e.headline).map(figure).unwrap_or_else(|| "-".into()),
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
        out += &format!(
            "  {} / {}: {:.2}× [{:.2}–{:.2}] {}\n",
            strip(&cmp.a),
            strip(&cmp.b),
            cmp.ratio.median,
            cmp.ratio.lo,
            cmp.ratio.hi,
            match cmp.verdict.as_str() {
                "no significant difference" => "no significant difference".to_string(),
                _ => String::new(),
            }
        );
    }
    out
}

fn figure(e: &Estimate) -> String {
    format!("{} [{} – {}]", num(e.median), num(e.lo), num(e.hi))
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn short(metric: &str) -> &str {
    match metric {
        "throughput_per_s" => "throughput",
        "latency_p50_us" => "p50",
        "latency_p90_us" => "p90",
        "latency_p99_us" => "p99",
        "latency_p99.9_us" => "p99.9",
        other => other,
    }
}

fn unit_of(metric: &str) -> &'static str {
    callbench_report::model::METRICS.iter().find(|(m, _, _)| *m == metric).map(|(_, u, _)| *u).unwrap_or("")
}
