//! The Markdown report of the fixture: tables, failures shown with their reason, comparisons that
//! never rank overlapping intervals, the seed reference table, servers and the reproducibility record.

use crate::common;

use callbench_report::markdown::markdown;
use callbench_results::format;
use callbench_results::model::{CellStatus, Results};

fn lines_with<'a>(md: &'a str, needle: &str) -> Vec<&'a str> {
    md.lines().filter(|l| l.contains(needle)).collect()
}

/// An experiment's section: from its `## title` to the next `## `.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md.find(&format!("\n## {title}\n")).unwrap_or_else(|| panic!("no section {title}")) + 1;
    let end = md[start + 3..].find("\n## ").map_or(md.len(), |e| start + 3 + e);
    &md[start..end]
}

/// The table row of a cell, in its experiment's section: `| server | transport | workload | [x |] …`.
fn row<'a>(md: &'a str, r: &Results, id: &str) -> &'a str {
    let c = r.cell(id).unwrap();
    let md = section(md, &r.experiment(&c.experiment).unwrap().title);
    let mut start = format!("| {} | {} | {} | ", c.server, c.transport, c.workload);
    if let Some(x) = c.x {
        start.push_str(&format!("{} | ", format::swept(x)));
    }
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with(&start)).collect();
    assert_eq!(rows.len(), 1, "one row for {id} (starting {start:?}) in:\n{md}");
    rows[0]
}

#[test]
fn one_section_and_one_table_row_per_cell() {
    let r = common::fixture();
    let md = markdown(&r);
    assert!(md.starts_with("# callbench: fixture\n"), "{md}");
    for exp in &r.experiments {
        assert!(md.contains(&format!("\n## {}\n", exp.title)), "no section for {}", exp.id);
    }
    for cell in &r.cells {
        row(&md, &r, &cell.id);
    }
    let headline = r.cell("sequential/auth/rust-actix").unwrap().summary["latency_p50_us"];
    let shown = format::estimate("latency_p50_us", &headline);
    assert!(shown.ends_with(" µs") && shown.contains(" [") && shown.contains(" – "), "{shown}");
    assert!(row(&md, &r, "sequential/auth/rust-actix").contains(&shown));
    assert!(md.contains("| server | transport | workload | connections | throughput: median [95% interval] |"));
}

#[test]
fn failed_cells_are_shown_with_their_status_and_error() {
    let r = common::fixture();
    let md = markdown(&r);
    let crashed = row(&md, &r, "closed-50/students/rust-axum");
    assert!(
        crashed.contains("server-crashed: server exited with signal 11 (SIGSEGV) during repetition 3 of 5"),
        "{crashed}"
    );
    // The server's output is on one line and cannot inject HTML.
    assert!(crashed.contains("panicked at src/main.rs:88: &lt;index out of bounds>"), "{crashed}");
    let not_measured = row(&md, &r, "closed-50/students/go-gin");
    assert!(not_measured.contains(&format!("not-measured: {}", common::NOT_MEASURED)), "{not_measured}");
    assert!(not_measured.contains("| – |"), "missing figures are marked: {not_measured}");
    assert!(row(&md, &r, "sequential/students/rust-axum").contains("| noisy |"));
    assert!(!row(&md, &r, "sequential/students/rust-actix").contains("noisy"));
}

#[test]
fn every_verdict_agrees_with_the_ratio_printed_beside_it() {
    let r = common::fixture();
    let md = markdown(&r);
    let mut no_difference = 0;
    for c in &r.comparisons {
        let (a, b) = (r.cell(&c.a).unwrap(), r.cell(&c.b).unwrap());
        let ratio = if c.exact { format::ratio_value(c.ratio.median) } else { format::ratio(&c.ratio) };
        let context = &a.workload;
        let label = callbench_report::names::metric_label(&c.metric);
        let found: Vec<&str> = lines_with(&md, &format!("- {} vs {}, {context}", a.server, b.server))
            .into_iter()
            .filter(|l| {
                l.contains(&format!("{label}: {ratio} — "))
                    && (a.x.is_none() || l.contains(&format::swept(a.x.unwrap())))
            })
            .collect();
        assert!(!found.is_empty(), "no line for {} vs {} {}", c.a, c.b, c.metric);
        for line in found {
            callbench_report::doc::comparisons::verdict_agrees(line).unwrap();
            no_difference += usize::from(line.contains("— no significant difference."));
        }
    }
    assert!(no_difference > 0, "the fixture has cells too close to rank");
    let cpu = lines_with(&md, "- rust-actix vs rust-tonic, auth, server CPU per call: ")[0];
    assert!(
        cpu.contains("b higher: rust-actix needs 0.") && cpu.contains("× the server CPU per call of rust-tonic."),
        "{cpu}"
    );
    // Bytes are counted, not timed: a plain ratio, no interval.
    let bytes = lines_with(&md, "- rust-actix vs rust-tonic, auth, wire bytes received per call: ")[0];
    assert!(!bytes.contains('['), "{bytes}");
    // A noisy cell's timings are read with care; its counts are what they are.
    let noisy = |metric: &str| lines_with(&md, &format!("- rust-actix vs rust-axum, students, {metric}: "))[0];
    assert!(noisy("server CPU per call").contains("Noisy: rust-axum"), "{}", noisy("server CPU per call"));
    assert!(!noisy("wire bytes received per call").contains("Noisy"), "{}", noisy("wire bytes received per call"));
}

#[test]
fn the_seed_reference_table_puts_our_figure_beside_the_article() {
    let r = common::fixture();
    let md = markdown(&r);
    assert!(md.contains("\n## What the seed article reported / what callbench measured here\n"));
    let actix = r.cell("sequential/auth/rust-actix").unwrap();
    let ours = format::estimate("latency_p50_us", &actix.summary["latency_p50_us"]);
    let line = lines_with(&md, "| 000 | auth over REST (actix-web), response time | 182 ms |")[0];
    assert!(line.contains(&format!("| {ours} | sequential/auth/rust-actix · p50 latency |")), "{line}");
    // A reference relative to its experiment finds its cell.
    let tonic = lines_with(&md, "| 000 | auth over gRPC (tonic), response time | 102 ms |")[0];
    assert!(tonic.contains("| sequential/auth/rust-tonic · p50 latency |"), "{tonic}");
    assert!(tonic.contains(" µs |"), "{tonic}");
    let none = lines_with(&md, "| 001 | Node.js REST vs gRPC, 1000 calls |")[0];
    assert!(none.contains("| not measured |"), "{none}");
    let gin = lines_with(&md, "| 002 | students, REST (gin) with ab |")[0];
    assert!(gin.contains("| not measured | closed-50/students/go-gin · throughput |"), "{gin}");
}

#[test]
fn servers_and_the_reproducibility_record() {
    let r = common::fixture();
    let md = markdown(&r);
    let gin = lines_with(&md, "| go-gin | go | gin | rest |")[0];
    assert!(gin.contains("115 passed, 3 failed") && gin.contains("rest-auth-bad-json: expected 400, got 500"), "{gin}");
    assert!(lines_with(&md, "| inproc |").iter().any(|l| l.contains("not verified")));
    for needle in [
        "| command line | callbench run --suite suites/fixture.toml |",
        "| suite file | suites/fixture.toml |",
        "| repetitions per cell | 5 |",
        "| CPU | AMD EPYC 7B13 (2 logical CPUs) |",
        "| kernel | 6.1.0-27-amd64 |",
        "| git commit | 3f2a9c1d0b7e4f5a6c8d9e0f1a2b3c4d5e6f7a8b |",
    ] {
        assert!(md.contains(needle), "{needle} not in:\n{md}");
    }
    assert!(md.contains(&format!("```toml\n{}```", common::SUITE_TEXT)), "the suite text is quoted verbatim");
}

#[test]
fn interrupted_and_partial_runs_say_so_first() {
    let mut r = common::fixture();
    assert!(!markdown(&r).contains("[!WARNING]"));
    r.complete = false;
    let partial = markdown(&r);
    assert!(partial.contains("> [!WARNING]\n> **Partial results:"), "{partial}");
    r.interrupted = true;
    r.cells[3].status = CellStatus::Interrupted;
    let md = markdown(&r);
    let banner = md.find("**Interrupted:").expect("an interrupted banner");
    assert!(banner < md.find("\n## ").unwrap(), "the banner comes before the experiments");
    assert!(row(&md, &r, &r.cells[3].id.clone()).ends_with("| interrupted |"));
}

#[test]
fn numbers_are_formatted_for_reading() {
    let r = common::fixture();
    let md = markdown(&r);
    let inproc = row(&md, &r, "closed-50/students/inproc");
    assert!(inproc.contains(" calls/s |") && inproc.matches(',').count() >= 2, "thousands separators: {inproc}");
    let actix = row(&md, &r, "closed-50/students/rust-actix");
    assert!(actix.contains(" ms |"), "latencies above 1000 µs in ms: {actix}");
    let seq = row(&md, &r, "sequential/auth/rust-actix");
    assert!(seq.contains(" µs |") && !seq.contains(" ms |"), "{seq}");
}

#[test]
fn a_cluster_experiment_says_how_its_workers_made_the_calls_and_what_was_made_again() {
    use callbench_results::model::ClusterRun;
    let mut r = common::fixture();
    let title = r.experiment("sequential").unwrap().title.clone();
    for (i, run) in r.cells.iter_mut().filter(|c| c.experiment == "sequential").flat_map(|c| &mut c.runs).enumerate() {
        let remade = if i < 2 { vec!["workers started 6.1 ms apart (limit 5 ms)".to_string()] } else { vec![] };
        run.cluster = Some(ClusterRun {
            ray: "127.0.0.1:6379".into(),
            workers: 2,
            start_skew_ms: 0.5 + i as f64 / 100.0,
            behind_schedule: vec![],
            per_worker: vec![],
            remade_for_skew: remade,
        });
    }
    let md = markdown(&r);
    let text = section(&md, &title);
    assert!(text.contains("Calls made by 2 workers of the Ray cluster at 127.0.0.1:6379"), "{text}");
    assert!(
        text.contains("2 repetition(s) were made again because the workers started further apart than the limit (2 run(s) set aside)."),
        "{text}"
    );
    let closed = section(&md, &r.experiment("closed-50").unwrap().title);
    assert!(!closed.contains("Ray cluster"), "{closed}");
}
