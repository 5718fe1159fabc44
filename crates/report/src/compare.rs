//! `callbench compare A B`: the same cells measured twice (another commit, another machine, the
//! same run repeated), matched by id, with the ratio B/A of each key metric and whether the two
//! runs agree. Rendered by [`CompareReport::markdown`].

mod render;

use callbench_results::model::{higher_is_better, Cell, Estimate, Results};
use callbench_results::stats;

/// The metrics compared for every cell, besides its experiment's headline.
pub const COMPARED: &[&str] =
    &["throughput_per_s", "latency_p50_us", "latency_p99_us", "client_cpu_us_per_call", "server_cpu_us_per_call"];

#[derive(Debug, Clone)]
pub struct CompareReport {
    /// `suite (started at)` of each side.
    pub a: String,
    pub b: String,
    /// What differs between the two runs' environments and suites, in words.
    pub environment_differences: Vec<String>,
    pub cells: Vec<CellComparison>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// The share a change must exceed, its whole interval beyond it, to be significant.
    pub threshold: f64,
}

#[derive(Debug, Clone)]
pub struct CellComparison {
    pub id: String,
    pub experiment: String,
    pub headline: String,
    /// The headline first, then [`COMPARED`].
    pub metrics: Vec<MetricComparison>,
}

#[derive(Debug, Clone)]
pub struct MetricComparison {
    pub metric: String,
    pub a: Option<Estimate>,
    pub b: Option<Estimate>,
    /// B / A: timings by rank (Hodges–Lehmann with the Mann–Whitney interval, as within a run);
    /// exact counts as the ratio of the medians (`lo` = `hi`).
    pub ratio: Option<Estimate>,
    /// The real coverage of a timing's interval (under 95% when the verdict is too few to tell).
    pub coverage: Option<f64>,
    /// An exact count (bytes per call, connections): no interval.
    pub exact: bool,
    pub verdict: Verdict,
}

/// Whole runs on one machine drift by more than their own repetitions vary: a change counts only
/// beyond this share (bench/results/methodology-2026-11.md#compare-threshold-and-the-machines-speed).
pub const DEFAULT_THRESHOLD: f64 = 0.15;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// The rank interval of B / A holds 1 (an exact count: the same within 0.5%).
    Agree,
    /// Either cell is flagged noisy: its repetitions cannot settle the question.
    Noisy,
    /// The rank interval of B / A lies wholly beyond the threshold (±15% by default); an exact
    /// count moved beyond it.
    ChangedSignificant,
    /// The rank interval excludes 1 but not the threshold: within the drift between runs.
    ChangedWithinNoise,
    /// The headline changed beyond the threshold, and the client's CPU per call (the same work for
    /// every call of the same load) changed as much the same way: the machine ran at another speed.
    MachineSpeed,
    /// An exact count changed, by less than the threshold.
    CountChanged,
    /// Too few repetitions for any interval to reach 95% (3 against 3): no verdict either way.
    TooFew,
    /// Both sides lack the metric (e.g. no server CPU in-process): nothing to compare.
    NotMeasured,
    /// One side has the metric and the other does not (a cell that failed in one run).
    Missing,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Noisy => "noisy",
            Verdict::ChangedSignificant => "changed (significant)",
            Verdict::ChangedWithinNoise => "changed (within noise)",
            Verdict::MachineSpeed => "the machine's speed changed",
            Verdict::CountChanged => "count changed (under the threshold)",
            Verdict::TooFew => "too few repetitions to tell",
            Verdict::NotMeasured => "not measured",
            Verdict::Missing => "missing on one side",
        }
    }
}

/// Matches the cells of `a` and `b` by id and compares them, with the default threshold.
pub fn compare(a: &Results, b: &Results) -> CompareReport {
    compare_with(a, b, DEFAULT_THRESHOLD)
}

/// Matches the cells of `a` and `b` by id and compares them; a change is significant only when
/// its whole interval lies beyond `threshold` (0.15: ±15%).
pub fn compare_with(a: &Results, b: &Results, threshold: f64) -> CompareReport {
    let mut cells = vec![];
    let mut only_in_a = vec![];
    for ca in &a.cells {
        match b.cell(&ca.id) {
            Some(cb) => cells.push(compare_cell(a, ca, cb, b, threshold)),
            None => only_in_a.push(ca.id.clone()),
        }
    }
    experiment_machine_speed(&mut cells, threshold);
    let only_in_b = b.cells.iter().filter(|c| a.cell(&c.id).is_none()).map(|c| c.id.clone()).collect();
    CompareReport {
        a: describe(a),
        b: describe(b),
        environment_differences: environment_differences(a, b),
        cells,
        only_in_a,
        only_in_b,
        threshold,
    }
}

fn describe(r: &Results) -> String {
    format!("{} ({})", r.suite.name, r.environment.started_at)
}

fn compare_cell(ra: &Results, a: &Cell, b: &Cell, rb: &Results, threshold: f64) -> CellComparison {
    let headline = ra
        .experiment(&a.experiment)
        .or_else(|| rb.experiment(&b.experiment))
        .map_or("latency_p50_us".to_string(), |e| e.headline.clone());
    let mut names = vec![headline.as_str()];
    names.extend(COMPARED.iter().filter(|m| **m != headline));
    let mut metrics: Vec<MetricComparison> = names.into_iter().map(|m| compare_metric(m, a, b, threshold)).collect();
    machine_speed(&mut metrics, &headline, threshold);
    CellComparison { id: a.id.clone(), experiment: a.experiment.clone(), metrics, headline }
}

/// A headline changed significantly while the client's CPU per call changed as much the same way
/// (its own interval beyond the threshold, the two slowdowns within 25% of each other): the client's
/// work per call is fixed for the same load, so the machine changed speed, not the server
/// (bench/results/methodology-2026-11.md#compare-threshold-and-the-machines-speed).
fn machine_speed(metrics: &mut [MetricComparison], headline: &str, threshold: f64) {
    let slowdown =
        |m: &MetricComparison| m.ratio.map(|r| if higher_is_better(&m.metric) { 1.0 / r.median } else { r.median });
    let client = client_cpu(metrics);
    let Some((client_slowdown, client_far)) =
        client.and_then(|c| Some((slowdown(c)?, c.ratio.as_ref().is_some_and(|r| beyond(r, threshold)))))
    else {
        return;
    };
    for m in metrics.iter_mut().filter(|m| m.metric == headline && m.verdict == Verdict::ChangedSignificant) {
        let Some(s) = slowdown(m) else { continue };
        let same_way = (s > 1.0) == (client_slowdown > 1.0);
        if client_far && same_way && (s / client_slowdown - 1.0).abs() <= 0.25 {
            m.verdict = Verdict::MachineSpeed;
        }
    }
}

/// The fewest cells of one experiment whose median client-CPU change can stand for the machine.
const MACHINE_QUORUM: usize = 3;

/// The same as [`machine_speed`] across one experiment: its cells run interleaved, so a slow spell
/// of the machine moves all of them, and the median of their clients' CPU-per-call ratios is the
/// machine's change (one server's regression moves its own cell only, not that median). A headline
/// still counts as changed only when, that factor divided out, its whole interval stays beyond the
/// threshold. A cell's own client interval can just miss the per-cell rule while its experiment's
/// cells all moved (bench/results/methodology-2026-11.md#a-slow-experiment).
fn experiment_machine_speed(cells: &mut [CellComparison], threshold: f64) {
    let mut experiments: Vec<String> = cells.iter().map(|c| c.experiment.clone()).collect();
    experiments.sort();
    experiments.dedup();
    for experiment in experiments {
        let client: Vec<f64> = cells
            .iter()
            .filter(|c| c.experiment == experiment)
            .filter_map(|c| client_cpu(&c.metrics))
            .filter_map(|m| m.ratio.map(|r| r.median))
            .collect();
        if client.len() < MACHINE_QUORUM {
            continue;
        }
        let Some(factor) = stats::median(&client) else { continue };
        for CellComparison { headline, metrics, .. } in cells.iter_mut().filter(|c| c.experiment == experiment) {
            for m in metrics.iter_mut().filter(|m| m.metric == *headline && m.verdict == Verdict::ChangedSignificant) {
                let Some(r) = m.ratio else { continue };
                // A slower machine lowers what more is better of and raises the rest.
                let f = if higher_is_better(&m.metric) { 1.0 / factor } else { factor };
                let rest = Estimate { median: r.median / f, lo: r.lo / f, hi: r.hi / f, n: r.n };
                if !beyond(&rest, threshold) {
                    m.verdict = Verdict::MachineSpeed;
                }
            }
        }
    }
}

/// The client's CPU per call among a cell's comparisons (a timing, not an exact count).
fn client_cpu(metrics: &[MetricComparison]) -> Option<&MetricComparison> {
    metrics.iter().find(|m| m.metric == "client_cpu_us_per_call" && !m.exact)
}

fn compare_metric(metric: &str, a: &Cell, b: &Cell, threshold: f64) -> MetricComparison {
    let values = |c: &Cell| c.runs.iter().filter_map(|r| r.metric(metric)).collect::<Vec<f64>>();
    let (ea, eb) = (a.summary.get(metric).copied(), b.summary.get(metric).copied());
    if callbench_results::model::is_exact_count(metric) {
        // Counted, not timed: compared as the numbers they are, never through an interval.
        let ratio = match (ea, eb) {
            (Some(x), Some(y)) if x.median != 0.0 => {
                let r = y.median / x.median;
                Some(Estimate { median: r, lo: r, hi: r, n: x.n.min(y.n) })
            }
            _ => None,
        };
        let verdict = count_verdict(ea.as_ref(), eb.as_ref(), threshold);
        return MetricComparison { metric: metric.into(), a: ea, b: eb, ratio, coverage: None, exact: true, verdict };
    }
    let ratio = stats::rank_ratio(&values(b), &values(a));
    MetricComparison {
        metric: metric.into(),
        a: ea,
        b: eb,
        ratio: ratio.map(|r| r.estimate),
        coverage: ratio.map(|r| r.coverage),
        exact: false,
        verdict: verdict(ea.as_ref(), eb.as_ref(), ratio.as_ref(), a.noisy || b.noisy, threshold),
    }
}

/// The same rule as within a run, read against the threshold: too few repetitions for a 95%
/// interval say so; agree when the rank interval of B / A holds 1; else noisy when either cell
/// is (its repetitions break the rank test's premise of one distribution: a fixed-rate p99 can be
/// bimodal, bench/results/methodology-2026-11.md#placement-and-noisy-cells); else changed, significantly
/// only when the whole interval lies beyond ±`threshold`. Without a ratio (a zero has no log: a
/// latency under the histograms' 1 µs), agree when each median lies in the other's interval.
pub fn verdict(
    a: Option<&Estimate>,
    b: Option<&Estimate>,
    ratio: Option<&stats::RankRatio>,
    noisy: bool,
    threshold: f64,
) -> Verdict {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return Verdict::NotMeasured,
        _ => return Verdict::Missing,
    };
    let inside = |v: f64, e: &Estimate| e.lo <= v && v <= e.hi;
    let (agree, far) = match ratio {
        Some(r) if !r.decidable => return Verdict::TooFew,
        Some(r) => (!r.significant(), beyond(&r.estimate, threshold)),
        None => (inside(a.median, b) && inside(b.median, a), false),
    };
    if agree {
        Verdict::Agree
    } else if noisy {
        Verdict::Noisy
    } else if far {
        Verdict::ChangedSignificant
    } else {
        Verdict::ChangedWithinNoise
    }
}

/// True when the whole interval of B / A lies beyond ±`threshold` (above 1 + t or below 1 / (1 + t)).
fn beyond(e: &Estimate, threshold: f64) -> bool {
    e.lo > 1.0 + threshold || e.hi < 1.0 / (1.0 + threshold)
}

/// Two exact counts: the same (within the 0.5% a printed ratio resolves), changed beyond the
/// threshold, or changed by less.
pub fn count_verdict(a: Option<&Estimate>, b: Option<&Estimate>, threshold: f64) -> Verdict {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a.median, b.median),
        (None, None) => return Verdict::NotMeasured,
        _ => return Verdict::Missing,
    };
    if (b - a).abs() <= 0.005 * a.abs() {
        Verdict::Agree
    } else if a == 0.0 || beyond(&Estimate { median: b / a, lo: b / a, hi: b / a, n: 1 }, threshold) {
        Verdict::ChangedSignificant
    } else {
        Verdict::CountChanged
    }
}

impl CompareReport {
    /// True unless some matched cell's headline changed significantly (its whole interval beyond
    /// the threshold) or was measured on one side only. A smaller change is reported, not failed:
    /// consecutive runs on a shared machine drift by more than one run's repetitions show
    /// ([`DEFAULT_THRESHOLD`]), and a check that failed on that would cry wolf.
    pub fn no_significant_change(&self) -> bool {
        self.headlines().all(|m| !matches!(m.verdict, Verdict::ChangedSignificant | Verdict::Missing))
    }

    /// The headline comparison of every matched cell.
    pub fn headlines(&self) -> impl Iterator<Item = &MetricComparison> {
        self.cells.iter().filter_map(|c| c.metrics.iter().find(|m| m.metric == c.headline))
    }

    /// How many headline comparisons got each verdict.
    pub fn counts(&self) -> Vec<(Verdict, usize)> {
        let mut counts: Vec<(Verdict, usize)> = vec![];
        for m in self.headlines() {
            match counts.iter_mut().find(|(v, _)| *v == m.verdict) {
                Some((_, n)) => *n += 1,
                None => counts.push((m.verdict, 1)),
            }
        }
        counts.sort();
        counts
    }
}

/// What could explain a difference besides the code under test.
fn environment_differences(a: &Results, b: &Results) -> Vec<String> {
    let (ea, eb) = (&a.environment, &b.environment);
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let dirty = |v: Option<bool>| match v {
        Some(true) => "uncommitted changes",
        Some(false) => "clean",
        None => "unknown",
    };
    let list = |v: &[usize]| format!("{v:?}");
    let pairs: Vec<(&str, String, String)> = vec![
        ("git commit", opt(&ea.git_commit), opt(&eb.git_commit)),
        ("working tree", dirty(ea.git_dirty).into(), dirty(eb.git_dirty).into()),
        ("callbench version", ea.callbench_version.clone(), eb.callbench_version.clone()),
        ("CPU model", ea.cpu_model.clone(), eb.cpu_model.clone()),
        ("logical CPUs", ea.cores.to_string(), eb.cores.to_string()),
        ("kernel", ea.kernel.clone(), eb.kernel.clone()),
        ("TCP congestion control", ea.tcp_congestion_control.clone(), eb.tcp_congestion_control.clone()),
        ("OS", ea.os.clone(), eb.os.clone()),
        ("client CPUs", list(&ea.client_cpus), list(&eb.client_cpus)),
        ("server CPUs", list(&ea.server_cpus), list(&eb.server_cpus)),
        ("tools", format!("{:?}", ea.tools), format!("{:?}", eb.tools)),
        ("repetitions", a.suite.repetitions.to_string(), b.suite.repetitions.to_string()),
    ];
    let mut out: Vec<String> =
        pairs.into_iter().filter(|(_, x, y)| x != y).map(|(what, x, y)| format!("{what}: {x} → {y}")).collect();
    if a.suite.text != b.suite.text {
        out.push(format!("suite text differs ({} → {})", a.suite.file, b.suite.file));
    }
    out
}

#[cfg(test)]
mod tests;
