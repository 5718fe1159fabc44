//! The report's section for experiments run by other load tools: each tool's claim beside the
//! server's own count, its CPU as a share of the client's, and a sentence on why its number is
//! what it is.

use crate::common;

use callbench_report::markdown::markdown;
use callbench_results::analysis;
use callbench_results::model::{Cell, OutsideCounts, PeerRun, Results};
use serde_json::json;

/// The fixture's first experiment, its cells re-labelled as run by `wrk` (client-bound, dropping
/// `dropped` calls per repetition) and by callbench.
fn with_tools(dropped: u64) -> Results {
    let mut r = common::fixture();
    let exp = r.experiments[0].id.clone();
    let base: Cell = r.cells.iter().find(|c| c.experiment == exp && c.transport != "inproc").unwrap().clone();
    let mut wrk = base.clone();
    wrk.id = format!("{}-wrk", base.id);
    wrk.server = format!("wrk+{}", base.server);
    wrk.params.insert("client".into(), json!("wrk"));
    wrk.params.insert("approximated".into(), json!(["wrk runs whole seconds: 1 s"]));
    for run in &mut wrk.runs {
        run.client_cpu_cores = 0.97;
        run.server_cpu_cores = Some(0.3);
        run.peer = Some(PeerRun {
            tool: "wrk".into(),
            command: "wrk -t 1 -c 50 -d 1s http://127.0.0.1:1/students".into(),
            exit: "exit code 0".into(),
            latency_us: [("p50".to_string(), 80.0), ("p99".to_string(), 400.0)].into(),
            server_answered: Some(run.calls_ok + run.calls_errors + dropped),
            wall_s: 1.0,
            rss_peak_kib: 4000,
        });
        run.outside = Some(outside(50, 160.0));
    }
    let mut callbench = base.clone();
    callbench.params.insert("client".into(), json!("callbench"));
    for run in &mut callbench.runs {
        run.outside = Some(outside(2, 150.0));
    }
    r.cells.retain(|c| c.experiment != exp);
    r.cells.push(callbench);
    r.cells.push(wrk);
    for c in r.cells.iter_mut() {
        analysis::summarise(c, "throughput_per_s", 0.0, 1, 1);
    }
    r.environment.client_cpus = vec![0];
    r
}

fn outside(connections: u64, ip_sent_per_call: f64) -> OutsideCounts {
    OutsideCounts {
        ip_sent_per_call,
        ip_received_per_call: 300.0,
        connections_opened: connections,
        calls: 1000,
        calls_counted_by: "server".into(),
        span: "run".into(),
        ..OutsideCounts::default()
    }
}

#[test]
fn each_tool_gets_its_claim_the_servers_count_and_why() {
    let md = markdown(&with_tools(50));
    assert!(md.contains("what each tool claimed, and what happened"), "{md}");
    let line = md.lines().find(|l| l.starts_with("- wrk: ")).unwrap_or_else(|| panic!("no wrk sentence: {md}"));
    assert!(line.contains("client-bound: it used 97% of the client's one CPU"), "{line}");
    assert!(line.contains("calls it did not count"), "{line}");
    assert!(line.contains("(approximated: wrk runs whole seconds: 1 s)"), "{line}");
    // callbench's own cell: no server count in its runs, so no claim about one.
    let own = md.lines().find(|l| l.starts_with("- callbench: ")).unwrap();
    assert!(!own.contains("server answered"), "{own}");
}

#[test]
fn a_tool_that_counted_every_answer_is_said_to() {
    let md = markdown(&with_tools(0));
    let line = md.lines().find(|l| l.starts_with("- wrk: ")).unwrap();
    assert!(line.contains("the server answered exactly the calls it counted"), "{line}");
}

#[test]
fn callbench_at_a_rate_is_said_to_spin_not_to_spend_its_cpu_on_calls() {
    let mut r = with_tools(0);
    for c in r.cells.iter_mut().filter(|c| !c.server.starts_with("wrk+")) {
        for run in &mut c.runs {
            run.rate_requested = Some(2000.0);
            run.rate_achieved = Some(2000.0);
            run.client_cpu_cores = 0.97;
            run.server_cpu_cores = Some(0.1);
        }
        analysis::summarise(c, "throughput_per_s", 0.0, 1, 1);
    }
    let md = markdown(&r);
    let own = md.lines().find(|l| l.starts_with("- callbench: ")).unwrap_or_else(|| panic!("{md}"));
    assert!(own.contains("neither side was the limit"), "{own}");
    assert!(own.contains("clock spins to start each call on time, so the 97% of its CPU"), "{own}");
}

#[test]
fn experiments_without_clients_have_no_such_section() {
    assert!(!markdown(&common::fixture()).contains("what each tool claimed"));
}

#[test]
fn connections_and_bytes_counted_outside_each_client_are_in_its_row() {
    let md = markdown(&with_tools(0));
    assert!(md.contains("counted by the kernel of the network namespace each client ran alone in"), "{md}");
    let row = |tool: &str| md.lines().find(|l| l.starts_with(&format!("| {tool} "))).unwrap_or_else(|| panic!("{md}"));
    assert!(row("wrk").contains("| 50 | 160 / 300 |"), "{}", row("wrk"));
    assert!(row("callbench").contains("| 2 | 150 / 300 |"), "{}", row("callbench"));
}

#[test]
fn without_counts_the_section_says_why() {
    let mut r = with_tools(0);
    for c in r.cells.iter_mut() {
        c.runs.iter_mut().for_each(|run| run.outside = None);
    }
    let md = markdown(&r);
    assert!(md.contains("not counted outside the clients"), "{md}");
}

#[test]
fn the_html_report_shows_which_side_was_busy_tool_by_tool() {
    let r = with_tools(0);
    let page = callbench_report::html::html(&r);
    let chart = svg_of(&page, "tools");
    // One group per tool, two bars each: wrk at 97% of the one client CPU, the server at 30%.
    assert_eq!(chart.matches("class=\"bar\"").count(), 4, "{chart}");
    assert!(chart.contains("the tool used 97% of its CPUs"), "{chart}");
    assert!(chart.contains("the server used 30% of its CPUs"), "{chart}");
    assert!(!chart.contains("log scale"), "a share is drawn on a linear axis: {chart}");
    assert!(!callbench_report::html::html(&common::fixture()).contains("data-kind=\"tools\""));
}

#[test]
fn each_tools_claim_is_drawn_under_the_servers_ceiling() {
    let mut r = with_tools(0);
    let page = callbench_report::html::html(&r);
    let chart = svg_of(&page, "tool-claims");
    assert_eq!(chart.matches("class=\"bar\"").count(), 2, "{chart}");
    assert!(!chart.contains("class=\"ceiling\""), "no cell had the server as its limit: {chart}");
    // callbench made the server the limit: its throughput is the ceiling wrk's bar sits under.
    let own = r.cells.iter_mut().find(|c| c.params.get("client").is_some_and(|v| v == "callbench")).unwrap();
    own.bottleneck = "server".into();
    let calls = own.summary["throughput_per_s"].median;
    let page = callbench_report::html::html(&r);
    let chart = svg_of(&page, "tool-claims");
    let label =
        format!("the server&#39;s ceiling here: {} calls/s (by callbench)", callbench_results::format::count(calls));
    assert!(chart.contains("class=\"ceiling\"") && chart.contains(&label), "{label} in {chart}");
}

fn svg_of<'a>(page: &'a str, kind: &str) -> &'a str {
    let start =
        page.find(&format!("<svg class=\"chart\" data-kind=\"{kind}\"")).unwrap_or_else(|| panic!("no {kind} chart"));
    &page[start..start + page[start..].find("</svg>").unwrap()]
}
