//! The report's section for experiments run by other load tools: each tool's claim beside the
//! server's own count, its CPU as a share of the client's, and a sentence on why its number is
//! what it is.

mod common;

use callbench_report::analysis;
use callbench_report::markdown::markdown;
use callbench_report::model::{Cell, PeerRun, Results};
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
            wire_counted: false,
        });
    }
    let mut callbench = base.clone();
    callbench.params.insert("client".into(), json!("callbench"));
    r.cells.retain(|c| c.experiment != exp);
    r.cells.push(callbench);
    r.cells.push(wrk);
    for c in r.cells.iter_mut() {
        analysis::summarise(c, "throughput_per_s", 0.0, 1, 1);
    }
    r.environment.client_cpus = vec![0];
    r
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
fn experiments_without_clients_have_no_such_section() {
    assert!(!markdown(&common::fixture()).contains("what each tool claimed"));
}
