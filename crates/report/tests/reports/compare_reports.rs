//! `callbench compare`: the same suite run twice agrees (or says it is noisy); a real change is
//! called significant; cells and environments that differ are named.

use crate::common;

use callbench_report::compare::{compare, Verdict};
use callbench_results::model::{Cell, Results};

/// A slower server: every run's figures of `cell` multiplied by `factor` (latency and the server's
/// CPU up, throughput down); the client's CPU per call, its own fixed work, stays.
fn slow_down(cell: &mut Cell, factor: f64) {
    slow(cell, factor, false);
}

/// `slow_down`, and with `client` the client's CPU per call too: the whole machine slower.
fn slow(cell: &mut Cell, factor: f64, client: bool) {
    for run in &mut cell.runs {
        if let Some(l) = run.latency_us.as_mut() {
            l.p50 *= factor;
            l.p90 *= factor;
            l.p99 *= factor;
            l.p99_9 *= factor;
            l.max *= factor;
            l.mean *= factor;
        }
        run.throughput_per_s /= factor;
        if client {
            run.client_cpu_us_per_call *= factor;
        }
        run.server_cpu_us_per_call = run.server_cpu_us_per_call.map(|v| v * factor);
    }
    let headline = if cell.experiment == "closed-50" || cell.experiment == "connections" {
        "throughput_per_s"
    } else {
        "latency_p50_us"
    };
    callbench_results::analysis::summarise(cell, headline, 0.0, 1, 1);
}

fn with(r: &Results, id: &str, f: impl Fn(&mut Cell)) -> Results {
    let mut r = r.clone();
    f(r.cells.iter_mut().find(|c| c.id == id).unwrap());
    r
}

#[test]
fn a_run_compared_with_itself_agrees_everywhere() {
    let r = common::fixture();
    let report = compare(&r, &r);
    assert!(report.no_significant_change());
    assert_eq!(report.cells.len(), r.cells.len());
    assert!(report.only_in_a.is_empty() && report.only_in_b.is_empty() && report.environment_differences.is_empty());
    for m in report.cells.iter().flat_map(|c| &c.metrics) {
        // The crashed cell kept 2 repetitions: too few for a verdict either way.
        assert!(matches!(m.verdict, Verdict::Agree | Verdict::NotMeasured | Verdict::TooFew), "{m:?}");
        if let Some(ratio) = m.ratio {
            assert!((ratio.median - 1.0).abs() < 1e-9, "{m:?}");
        }
    }
    let md = report.markdown();
    assert!(md.contains("Headline metric of 48 matched cells: 46 agree, 0 noisy, 0 changed (significant), 0 changed (within noise), 1 too few repetitions to tell, 1 not measured; 0 cells only in A, 0 only in B."), "{md}");
}

#[test]
fn a_drift_within_the_threshold_is_reported_but_does_not_fail_the_check() {
    let a = common::fixture();
    let id = "sequential/auth/rust-tonic";
    // Every repetition 8% slower: a drift such as two whole runs show
    // (bench/results/methodology-2026-11.md#compare-threshold-and-the-machines-speed), not a regression.
    let report = compare(&a, &with(&a, id, |c| slow_down(c, 1.08)));
    let head = report.cells.iter().find(|c| c.id == id).unwrap().metrics[0].clone();
    assert!(matches!(head.verdict, Verdict::Agree | Verdict::ChangedWithinNoise), "{head:?}");
    assert!(report.no_significant_change(), "{}", report.markdown());
    // Against a 2% threshold the same drift is a change, wholly beyond it or not.
    let strict = callbench_report::compare::compare_with(&a, &with(&a, id, |c| slow_down(c, 1.5)), 0.02);
    assert!(!strict.no_significant_change());
}

#[test]
fn a_slower_cell_is_a_significant_change_with_its_ratio() {
    let a = common::fixture();
    let id = "sequential/auth/rust-actix";
    let b = with(&a, id, |c| slow_down(c, 1.5));
    let report = compare(&a, &b);
    assert!(!report.no_significant_change());
    let cell = report.cells.iter().find(|c| c.id == id).unwrap();
    assert_eq!(cell.headline, "latency_p50_us");
    let names: Vec<&str> = cell.metrics.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(
        names,
        ["latency_p50_us", "throughput_per_s", "latency_p99_us", "client_cpu_us_per_call", "server_cpu_us_per_call"]
    );
    for m in &cell.metrics {
        let expected = if m.metric == "client_cpu_us_per_call" { Verdict::Agree } else { Verdict::ChangedSignificant };
        assert_eq!(m.verdict, expected, "{m:?}");
    }
    let ratio = cell.metrics[0].ratio.unwrap();
    assert!((ratio.median - 1.5).abs() < 0.01 && ratio.lo <= ratio.median && ratio.median <= ratio.hi, "B/A {ratio:?}");
    let md = report.markdown();
    assert!(md.contains("45 agree, 0 noisy, 1 changed (significant)"), "{md}");
    let row = md.lines().find(|l| l.starts_with(&format!("| {id} | p50 latency (headline) |"))).unwrap();
    assert!(row.contains("| 1.50× [") && row.ends_with("| changed (significant) |"), "{row}");
}

#[test]
fn a_noisy_cell_that_moved_is_called_noisy() {
    let a = common::fixture();
    let id = "sequential/students/rust-axum";
    assert!(a.cell(id).unwrap().noisy);
    let b = with(&a, id, |c| slow_down(c, 1.6));
    let report = compare(&a, &b);
    let head = report.cells.iter().find(|c| c.id == id).unwrap().metrics[0].clone();
    assert_eq!(head.verdict, Verdict::Noisy);
    assert!(report.no_significant_change());
}

#[test]
fn bytes_per_call_are_compared_as_counts_and_few_repetitions_say_so() {
    let mut a = common::fixture();
    a.experiments[0].headline = "wire_received_per_call".into();
    let id = "sequential/auth/rust-tonic";
    let b = with(&a, id, |c| {
        for run in &mut c.runs {
            run.wire_received_per_call *= 1.04;
        }
        callbench_results::analysis::summarise(c, "wire_received_per_call", 0.0, 1, 1);
    });
    let report = compare(&a, &b);
    let m = report.cells.iter().find(|c| c.id == id).unwrap().metrics[0].clone();
    assert_eq!((m.metric.as_str(), m.exact, m.verdict), ("wire_received_per_call", true, Verdict::CountChanged));
    let row = report
        .markdown()
        .lines()
        .find(|l| l.starts_with(&format!("| {id} | wire bytes received")))
        .unwrap()
        .to_string();
    assert!(row.contains("| 1.04× |") && !row.contains('['), "a count has no interval: {row}");

    let few = |r: &Results| {
        let mut r = r.clone();
        for c in &mut r.cells {
            c.runs.truncate(3);
        }
        r
    };
    let a = common::fixture();
    let report = compare(&few(&a), &few(&with(&a, id, |c| slow_down(c, 1.5))));
    let m = report.cells.iter().find(|c| c.id == id).unwrap().metrics[0].clone();
    assert_eq!(m.verdict, Verdict::TooFew, "{m:?}");
    assert!(report.no_significant_change(), "no verdict either way");
    let md = report.markdown();
    let row = md.lines().find(|l| l.starts_with(&format!("| {id} |"))).unwrap();
    assert!(row.contains("(the whole range, only a 90% interval) | too few repetitions to tell |"), "{row}");
}

#[test]
fn missing_cells_and_other_environments_are_named() {
    let a = common::fixture();
    let mut b = a.clone();
    let gone = b.cells.remove(0).id;
    let mut extra = b.cells[0].clone();
    extra.id = "sequential/auth/rust-new".into();
    b.cells.push(extra);
    b.environment.git_commit = Some("0000000".into());
    b.environment.kernel = "6.12.0".into();
    b.suite.text.push_str("# edited\n");
    let report = compare(&a, &b);
    assert_eq!(report.only_in_a, std::slice::from_ref(&gone));
    assert_eq!(report.only_in_b, ["sequential/auth/rust-new"]);
    let md = report.markdown();
    assert!(md.contains(&format!("## Only in A\n\n- {gone}")), "{md}");
    assert!(md.contains("## Only in B\n\n- sequential/auth/rust-new"), "{md}");
    assert!(md.contains("## The environments differ"), "{md}");
    assert!(md.contains("- git commit: 3f2a9c1d0b7e4f5a6c8d9e0f1a2b3c4d5e6f7a8b → 0000000"), "{md}");
    assert!(md.contains("- kernel: 6.1.0-27-amd64 → 6.12.0"), "{md}");
    assert!(md.contains("- suite text differs"), "{md}");
}

#[test]
fn a_cell_that_failed_on_one_side_is_not_agreement() {
    let a = common::fixture();
    let id = "sequential/auth/rust-tonic";
    let b = with(&a, id, |c| {
        c.runs.clear();
        c.summary.clear();
        c.status = callbench_results::model::CellStatus::ServerCrashed;
    });
    let report = compare(&a, &b);
    assert_eq!(report.cells.iter().find(|c| c.id == id).unwrap().metrics[0].verdict, Verdict::Missing);
    assert!(!report.no_significant_change());
}

#[test]
fn a_cell_whose_client_slowed_as_much_ran_on_a_slower_machine() {
    let a = common::fixture();
    let id = "sequential/auth/rust-actix";
    let b = with(&a, id, |c| slow(c, 1.5, true));
    let report = compare(&a, &b);
    let cell = report.cells.iter().find(|c| c.id == id).unwrap();
    assert_eq!(cell.metrics[0].verdict, Verdict::MachineSpeed, "{:?}", cell.metrics[0]);
    // Reported, not failed: the server's code is not what changed.
    assert!(report.no_significant_change());
    assert!(report.markdown().contains("1 the machine's speed changed"), "{}", report.markdown());
}
