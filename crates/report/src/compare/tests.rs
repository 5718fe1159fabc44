use super::*;
use callbench_results::model::RunMetrics;
use callbench_results::stats;

fn e(median: f64, lo: f64, hi: f64) -> Estimate {
    Estimate { median, lo, hi, n: 5 }
}

/// B / A by rank, and the two runs' estimates.
fn runs(a: &[f64], b: &[f64]) -> (Estimate, Estimate, stats::RankRatio) {
    let (ea, eb) = (stats::estimate(a).unwrap(), stats::estimate(b).unwrap());
    (ea, eb, stats::rank_ratio(b, a).unwrap())
}

const A: [f64; 5] = [100.0, 98.0, 102.0, 101.0, 99.0];

#[test]
fn an_interval_that_holds_one_agrees() {
    let (a, b, r) = runs(&A, &[101.0, 99.5, 100.5, 98.5, 102.5]);
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), false, 0.15), Verdict::Agree);
    // Agreement wins over noise: noisy cells that agree still agree.
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), true, 0.15), Verdict::Agree);
}

#[test]
fn a_change_is_noisy_when_either_cell_is() {
    let (a, b, r) = runs(&A, &[150.0, 148.0, 152.0, 149.0, 151.0]);
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), true, 0.15), Verdict::Noisy);
}

#[test]
fn three_repetitions_against_three_are_too_few_to_tell() {
    let (a, b, r) = runs(&[100.0, 101.0, 99.0], &[150.0, 151.0, 149.0]);
    assert!(!r.decidable);
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), false, 0.15), Verdict::TooFew);
}

#[test]
fn exact_counts_are_compared_as_numbers() {
    let count = |v: f64| e(v, v * 0.9, v * 1.1);
    assert_eq!(count_verdict(Some(&count(171.0)), Some(&count(171.5)), 0.15), Verdict::Agree);
    assert_eq!(count_verdict(Some(&count(171.0)), Some(&count(160.0)), 0.15), Verdict::CountChanged);
    assert_eq!(count_verdict(Some(&count(171.0)), Some(&count(96.0)), 0.15), Verdict::ChangedSignificant);
    assert_eq!(count_verdict(None, Some(&count(96.0)), 0.15), Verdict::Missing);
}

#[test]
fn a_change_wholly_beyond_the_threshold_is_significant() {
    let (a, b, r) = runs(&A, &[150.0, 148.0, 152.0, 149.0, 151.0]);
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), false, 0.15), Verdict::ChangedSignificant);
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), false, 0.60), Verdict::ChangedWithinNoise);
}

#[test]
fn a_real_change_smaller_than_the_drift_between_runs_is_within_noise() {
    // 8% slower in every repetition: significant by rank, but within ±15%.
    let (a, b, r) = runs(&A, &[108.0, 106.0, 110.0, 109.0, 107.0]);
    assert!(r.significant());
    assert_eq!(verdict(Some(&a), Some(&b), Some(&r), false, 0.15), Verdict::ChangedWithinNoise);
}

#[test]
fn missing_figures() {
    assert_eq!(verdict(None, None, None, false, 0.15), Verdict::NotMeasured);
    assert_eq!(verdict(Some(&e(1.0, 1.0, 1.0)), None, None, false, 0.15), Verdict::Missing);
}

fn results(p50s: &[(&str, &[f64])]) -> Results {
    let cells = p50s
        .iter()
        .map(|(id, values)| {
            let runs: Vec<RunMetrics> = values
                .iter()
                .map(|v| RunMetrics {
                    throughput_per_s: 1e6 / v,
                    latency_us: Some(callbench_results::model::Latency { p50: *v, p99: v * 2.0, ..Default::default() }),
                    client_cpu_us_per_call: 10.0,
                    ..Default::default()
                })
                .collect();
            let mut cell = crate::test_cell::cell(id, "sequential", runs);
            callbench_results::analysis::summarise(&mut cell, "latency_p50_us", 0.0, 1, 1);
            cell
        })
        .collect();
    Results {
        schema: callbench_results::model::SCHEMA.into(),
        complete: true,
        interrupted: false,
        suite: callbench_results::model::SuiteRecord {
            name: "t".into(),
            description: String::new(),
            file: "t.toml".into(),
            text: String::new(),
            repetitions: 5,
            interval_floor: 0.0,
        },
        environment: Default::default(),
        servers: vec![],
        experiments: vec![callbench_results::model::Experiment {
            id: "sequential".into(),
            title: "Sequential".into(),
            description: String::new(),
            seeds: vec![],
            sweep: None,
            headline: "latency_p50_us".into(),
            references: vec![],
            answer: None,
            skipped: None,
            cpus: None,
        }],
        cells,
        comparisons: vec![],
        steadiness: None,
        seeds: vec![],
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

#[test]
fn a_change_the_clients_fixed_work_shares_is_the_machines_speed() {
    let m = |metric: &str, median: f64, lo: f64, hi: f64, verdict: Verdict| MetricComparison {
        metric: metric.into(),
        a: Some(e(1.0, 1.0, 1.0)),
        b: Some(e(median, lo, hi)),
        ratio: Some(e(median, lo, hi)),
        coverage: Some(0.95),
        exact: false,
        verdict,
    };
    let headline = |client: (f64, f64, f64), throughput: f64| {
        let mut metrics = vec![
            m("throughput_per_s", throughput, throughput * 0.96, throughput * 1.04, Verdict::ChangedSignificant),
            m("client_cpu_us_per_call", client.0, client.1, client.2, Verdict::ChangedSignificant),
        ];
        machine_speed(&mut metrics, "throughput_per_s", 0.15);
        metrics[0].verdict
    };
    // A real case (bench/results/methodology-2026-11.md#compare-threshold-and-the-machines-speed): throughput ×0.70
    // while the client's CPU per call rose ×1.42.
    assert_eq!(headline((1.42, 1.37, 1.54), 0.70), Verdict::MachineSpeed);
    // The client's work unchanged: the server changed.
    assert_eq!(headline((1.02, 0.98, 1.05), 0.70), Verdict::ChangedSignificant);
    // The client slower but the server faster, or far more than the client: not the machine alone.
    assert_eq!(headline((1.42, 1.37, 1.54), 1.40), Verdict::ChangedSignificant);
    assert_eq!(headline((1.20, 1.17, 1.25), 0.50), Verdict::ChangedSignificant);
}

#[test]
fn a_slow_spell_over_a_whole_experiment_is_the_machines_speed() {
    let metric = |metric: &str, r: (f64, f64, f64), verdict: Verdict| MetricComparison {
        metric: metric.into(),
        a: Some(e(1.0, 1.0, 1.0)),
        b: Some(e(r.0, r.1, r.2)),
        ratio: Some(e(r.0, r.1, r.2)),
        coverage: Some(0.95),
        exact: false,
        verdict,
    };
    let cell = |id: &str, throughput: (f64, f64, f64), client: (f64, f64, f64)| CellComparison {
        id: id.into(),
        experiment: "connections".into(),
        headline: "throughput_per_s".into(),
        metrics: vec![
            metric("throughput_per_s", throughput, Verdict::ChangedSignificant),
            metric("client_cpu_us_per_call", client, Verdict::ChangedWithinNoise),
        ],
    };
    let verdicts = |others: (f64, f64, f64), tonic: (f64, f64, f64)| {
        let mut cells = vec![
            cell("actix", (0.73, 0.67, 0.81), (others.0 * 1.03, others.1, others.2)),
            cell("axum", (0.78, 0.73, 0.82), others),
            cell("tonic", tonic, (1.27, 1.12, 1.41)),
        ];
        experiment_machine_speed(&mut cells, 0.15);
        cells.iter().map(|c| c.metrics[0].verdict).collect::<Vec<_>>()
    };
    // A real experiment (bench/results/methodology-2026-11.md#a-slow-experiment): every cell's
    // client CPU per call ×1.27–1.54, tonic's own interval just short of the per-cell rule;
    // divided by the experiment's ×1.37, no throughput is beyond ±15%.
    assert_eq!(verdicts((1.37, 1.29, 1.47), (0.71, 0.66, 0.75)), vec![Verdict::MachineSpeed; 3]);
    // One server fell far more than the machine did: that one is still a change.
    let v = verdicts((1.37, 1.29, 1.47), (0.40, 0.36, 0.44));
    assert_eq!(v[2], Verdict::ChangedSignificant);
    // The other clients' work unchanged: the machine did not move, so nothing is excused.
    let v = verdicts((1.0, 0.95, 1.05), (0.71, 0.66, 0.75));
    assert_eq!(v[2], Verdict::ChangedSignificant);
}
