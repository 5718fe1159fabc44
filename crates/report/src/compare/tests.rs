use super::*;
use crate::model::{CellStatus, RunMetrics};

fn e(median: f64, lo: f64, hi: f64) -> Estimate {
    Estimate { median, lo, hi, n: 5 }
}

#[test]
fn medians_inside_each_other_intervals_agree() {
    assert_eq!(verdict(Some(&e(100.0, 95.0, 105.0)), Some(&e(102.0, 97.0, 106.0)), false), Verdict::Agree);
    // Agreement wins over noise: noisy cells that agree still agree.
    assert_eq!(verdict(Some(&e(100.0, 60.0, 140.0)), Some(&e(101.0, 70.0, 150.0)), true), Verdict::Agree);
}

#[test]
fn disagreement_is_noisy_when_either_cell_is() {
    assert_eq!(verdict(Some(&e(100.0, 95.0, 105.0)), Some(&e(150.0, 140.0, 160.0)), true), Verdict::Noisy);
}

#[test]
fn separate_intervals_are_a_significant_change() {
    assert_eq!(
        verdict(Some(&e(100.0, 95.0, 105.0)), Some(&e(150.0, 140.0, 160.0)), false),
        Verdict::ChangedSignificant
    );
}

#[test]
fn overlapping_intervals_with_a_median_outside_change_within_noise() {
    assert_eq!(
        verdict(Some(&e(100.0, 95.0, 105.0)), Some(&e(108.0, 104.0, 112.0)), false),
        Verdict::ChangedWithinNoise
    );
}

#[test]
fn missing_figures() {
    assert_eq!(verdict(None, None, false), Verdict::NotMeasured);
    assert_eq!(verdict(Some(&e(1.0, 1.0, 1.0)), None, false), Verdict::Missing);
}

fn results(p50s: &[(&str, &[f64])]) -> Results {
    let cells = p50s
        .iter()
        .map(|(id, values)| {
            let runs: Vec<RunMetrics> = values
                .iter()
                .map(|v| RunMetrics {
                    throughput_per_s: 1e6 / v,
                    latency_us: Some(crate::model::Latency { p50: *v, p99: v * 2.0, ..Default::default() }),
                    client_cpu_us_per_call: 10.0,
                    ..Default::default()
                })
                .collect();
            let mut cell = Cell {
                id: id.to_string(),
                experiment: "sequential".into(),
                server: "s".into(),
                workload: "auth".into(),
                transport: "rest-h1".into(),
                params: Default::default(),
                x: None,
                status: CellStatus::Ok,
                error: None,
                runs,
                summary: Default::default(),
                spectrum: vec![],
                bottleneck: String::new(),
                noisy: false,
                hdr_file: None,
            };
            crate::analysis::summarise(&mut cell, "latency_p50_us", 0.0, 1, 1);
            cell
        })
        .collect();
    Results {
        schema: crate::model::SCHEMA.into(),
        complete: true,
        interrupted: false,
        suite: crate::model::SuiteRecord {
            name: "t".into(),
            description: String::new(),
            file: "t.toml".into(),
            text: String::new(),
            repetitions: 5,
            interval_floor: 0.0,
        },
        environment: Default::default(),
        servers: vec![],
        experiments: vec![crate::model::Experiment {
            id: "sequential".into(),
            title: "Sequential".into(),
            description: String::new(),
            seeds: vec![],
            sweep: None,
            headline: "latency_p50_us".into(),
            references: vec![],
        }],
        cells,
        comparisons: vec![],
    }
}

#[test]
fn two_runs_of_the_same_cells_agree_and_a_slower_one_does_not() {
    let a = results(&[("x", &[100.0, 101.0, 99.0, 100.5, 99.5]), ("only-a", &[1.0, 1.0, 1.0])]);
    let b = results(&[("x", &[100.2, 100.8, 99.4, 100.1, 99.9]), ("only-b", &[1.0, 1.0, 1.0])]);
    let report = compare(&a, &b);
    assert!(report.no_significant_change(), "{}", report.markdown());
    assert_eq!(report.only_in_a, ["only-a"]);
    assert_eq!(report.only_in_b, ["only-b"]);
    let head = report.headlines().next().unwrap();
    assert_eq!(head.metric, "latency_p50_us");
    let ratio = head.ratio.unwrap();
    assert!(ratio.lo <= 1.0 && 1.0 <= ratio.hi, "B/A interval around 1: {ratio:?}");

    let slower = results(&[("x", &[150.0, 151.0, 149.0, 150.5, 149.5])]);
    let report = compare(&a, &slower);
    assert!(!report.no_significant_change());
    assert_eq!(report.headlines().next().unwrap().verdict, Verdict::ChangedSignificant);
    assert!((report.headlines().next().unwrap().ratio.unwrap().median - 1.5).abs() < 0.01);
    let md = report.markdown();
    assert!(md.contains("0 agree, 0 noisy, 1 changed (significant), 0 changed (within noise)"), "{md}");
    assert!(md.contains("| x | p50 latency (headline) |"), "{md}");
}

#[test]
fn environment_differences_are_named() {
    let a = results(&[]);
    let mut b = results(&[]);
    b.environment.git_commit = Some("abc123".into());
    b.environment.cpu_model = "Other CPU".into();
    b.suite.text = "changed".into();
    let d = compare(&a, &b).environment_differences;
    assert!(d.iter().any(|l| l.starts_with("git commit: unknown → abc123")), "{d:?}");
    assert!(d.iter().any(|l| l.starts_with("CPU model")), "{d:?}");
    assert!(d.iter().any(|l| l.starts_with("suite text differs")), "{d:?}");
    assert!(compare(&a, &a).environment_differences.is_empty());
}
