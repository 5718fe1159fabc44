//! Each experiment's headline in words: per workload (and swept value) which server was ahead and
//! by how much, read only from the comparisons' own verdicts (so nobody is "ahead" beside an
//! interval that holds 1), with the in-process figure as a baseline. A sweep where the same server
//! is ahead of the same others at every value reads as one sentence.

use crate::doc::comparisons::{figure, EQUAL, NO_DIFFERENCE, TOO_FEW};
use crate::names;
use callbench_results::analysis;
use callbench_results::format;
use callbench_results::model::{higher_is_better, Cell, Comparison, Estimate, Experiment, Results};

/// The cells of one workload and swept value: the best on the headline against the others.
struct Group<'a> {
    workload: String,
    /// The swept value as written (`10,000`, `per-request`), empty without a sweep.
    x: String,
    best: &'a Cell,
    /// Significantly behind the best: (name, figure, ratio best / other).
    behind: Vec<(String, String, f64)>,
    /// No significant difference (timings), with the figure.
    tied: Vec<String>,
    /// Equal counts.
    same: Vec<String>,
    /// Too few repetitions to tell, with the figure.
    undecided: Vec<String>,
    /// No comparison, or one whose rank ratio goes against the order of the medians.
    unranked: Vec<String>,
    baseline: Option<&'a Cell>,
    /// The raw echo's cell: what the kernel alone costs a call of these bytes.
    floor: Option<&'a Cell>,
}

/// The experiment's headline sentences, workload by workload.
pub fn sentences(r: &Results, exp: &Experiment) -> Vec<String> {
    let groups = groups(r, exp);
    let mut workloads: Vec<&str> = vec![];
    for g in &groups {
        if !workloads.contains(&g.workload.as_str()) {
            workloads.push(&g.workload);
        }
    }
    let mut out = vec![];
    for w in workloads {
        let of: Vec<&Group> = groups.iter().filter(|g| g.workload == w).collect();
        match condensed(r, exp, &of) {
            Some(one) => out.push(one),
            None => out.extend(of.iter().map(|g| sentence(r, exp, g))),
        }
    }
    out
}

/// The measured cells grouped by workload and swept value, in the tables' order (swept values
/// by number), each group read against its best cell.
fn groups<'a>(r: &'a Results, exp: &Experiment) -> Vec<Group<'a>> {
    let mut keyed: Vec<((String, String), Vec<&Cell>)> = vec![];
    let cells = r
        .cells
        .iter()
        .filter(|c| c.experiment == exp.id && c.summary.contains_key(&exp.headline) && analysis::measured_fully(c));
    for c in cells {
        let key = (c.workload.clone(), names::swept_value(Some(exp), c).unwrap_or_default());
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, cells)) => cells.push(c),
            None => keyed.push((key, vec![c])),
        }
    }
    let workload_rank = |w: &str| keyed.iter().position(|((k, _), _)| k == w).unwrap_or(0);
    let mut order: Vec<usize> = (0..keyed.len()).collect();
    order.sort_by(|&i, &j| {
        let x = |i: usize| keyed[i].1[0].x.unwrap_or(f64::NEG_INFINITY);
        (workload_rank(&keyed[i].0 .0), x(i)).partial_cmp(&(workload_rank(&keyed[j].0 .0), x(j))).unwrap()
    });
    order.into_iter().filter_map(|i| group(r, exp, &keyed[i].0, &keyed[i].1)).collect()
}

fn group<'a>(r: &'a Results, exp: &Experiment, key: &(String, String), all: &[&'a Cell]) -> Option<Group<'a>> {
    // In-process calls and the raw echo (the kernel alone) are baselines, not contenders: the
    // ranking is of calls over the wire.
    let (bases, mut cells): (Vec<&Cell>, Vec<&Cell>) =
        all.iter().partition(|c| c.transport == "inproc" || c.transport == "raw");
    let baseline = bases.iter().copied().find(|c| c.transport == "inproc");
    let floor = bases.iter().copied().find(|c| c.transport == "raw");
    if cells.len() < 2 {
        return None;
    }
    let better = higher_is_better(&exp.headline);
    let key_of = |c: &&Cell| c.summary[&exp.headline].median;
    cells.sort_by(|a, b| if better { key_of(b).total_cmp(&key_of(a)) } else { key_of(a).total_cmp(&key_of(b)) });
    let best = cells[0];
    let mut g = Group {
        workload: key.0.clone(),
        x: key.1.clone(),
        best,
        behind: vec![],
        tied: vec![],
        same: vec![],
        undecided: vec![],
        unranked: vec![],
        baseline,
        floor,
    };
    for other in &cells[1..] {
        let name = names::series(r, other);
        match comparison(r, &exp.headline, best, other) {
            Some((c, ratio)) if c.verdict == TOO_FEW => g.undecided.push(format!("{name} ({})", figure(c, &ratio))),
            Some((c, ratio)) if c.verdict == NO_DIFFERENCE => {
                g.tied.push(format!("{name} ({}, within noise)", figure(c, &ratio)))
            }
            Some((c, _)) if c.verdict == EQUAL => g.same.push(name),
            // The rank ratio can disagree with the order of the medians: no ranking then.
            Some((c, ratio)) if (better && ratio.hi < 1.0) || (!better && ratio.lo > 1.0) => {
                g.unranked.push(format!("{name} ({} by rank)", figure(c, &ratio)))
            }
            Some((c, ratio)) => g.behind.push((name, figure(c, &ratio), ratio.median)),
            None => g.unranked.push(format!("{name} {}", format::value_with_unit(&exp.headline, key_of(other)))),
        }
    }
    Some(g)
}

/// `Sequential, auth: rust-actix was ahead on p50 latency at 45.0 µs — 0.58× [0.55 – 0.60]
/// rust-tonic's; no significant difference from rust-axum (…) (in-process baseline: 900 ns).`
/// Parts are separated by "; " (`doc::comparisons::summary_agrees` reads them so).
fn sentence(r: &Results, exp: &Experiment, g: &Group) -> String {
    let label = names::metric_label(&exp.headline);
    let at = if g.x.is_empty() { String::new() } else { format!(", {} = {}", exp.sweep.as_deref().unwrap_or(""), g.x) };
    let head = format!("{}, {}{at}: ", exp.title, g.workload);
    let (best, value) = (names::series(r, g.best), format::value_with_unit(&exp.headline, median(exp, g.best)));
    let mut parts = vec![];
    if !g.behind.is_empty() {
        let behind: Vec<String> = g.behind.iter().map(|(name, figure, _)| format!("{figure} {name}'s")).collect();
        parts.push(format!("{head}{best} was ahead on {label} at {value} — {}", behind.join(", ")));
        if !g.tied.is_empty() {
            parts.push(format!("{NO_DIFFERENCE} from {}", g.tied.join(", ")));
        }
    } else if !g.tied.is_empty() {
        // Nobody is ahead when every difference is within noise.
        parts.push(format!("{head}{NO_DIFFERENCE} on {label} between {best} at {value} and {}", g.tied.join(", ")));
    } else {
        // Only equal counts or undecided comparisons: a figure, no ranking.
        parts.push(format!("{head}{label} {value} for {best}"));
    }
    if !g.same.is_empty() {
        parts.push(format!("the same {label} as {best} for {}", g.same.join(", ")));
    }
    if !g.undecided.is_empty() {
        parts.push(format!("{TOO_FEW} against {}", g.undecided.join(", ")));
    }
    if !g.unranked.is_empty() {
        parts.push(format!("not compared: {}", g.unranked.join(", ")));
    }
    let mut text = parts.join("; ");
    let mut bases = vec![];
    if let Some(baseline) = g.baseline {
        bases.push(format!("in-process baseline: {}", format::value_with_unit(&exp.headline, median(exp, baseline))));
    }
    if let Some(floor) = g.floor {
        bases.push(format!(
            "raw echo, the kernel alone: {}",
            format::value_with_unit(&exp.headline, median(exp, floor))
        ));
    }
    if !bases.is_empty() {
        text.push_str(&format!(" ({})", bases.join(", ")));
    }
    text.push('.');
    text
}

/// One sentence for a whole sweep of one workload, when the same server is significantly ahead
/// of the same others at every swept value: `…, students: rust-actix was ahead on p99 latency
/// at every rate from 2,000 to 19,000 — 0.11× to 0.57× rust-tonic's, significant at each.`
fn condensed(r: &Results, exp: &Experiment, groups: &[&Group]) -> Option<String> {
    let sweep = exp.sweep.as_deref()?;
    let (first, last) = (groups.first()?, groups.last()?);
    let names_of = |g: &Group| g.behind.iter().map(|(n, _, _)| n.clone()).collect::<Vec<_>>();
    let uniform = groups.len() >= 2
        && groups.iter().all(|g| {
            g.best.x.is_some()
                && g.best.server == first.best.server
                && g.best.transport == first.best.transport
                && names_of(g) == names_of(first)
                && !g.behind.is_empty()
                && g.tied.is_empty()
                && g.same.is_empty()
                && g.undecided.is_empty()
                && g.unranked.is_empty()
        });
    if !uniform {
        return None;
    }
    let ranges: Vec<String> = names_of(first)
        .iter()
        .map(|name| {
            let ratios: Vec<f64> =
                groups.iter().flat_map(|g| g.behind.iter().filter(|(n, _, _)| n == name).map(|(_, _, v)| *v)).collect();
            let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            let (lo, hi) = (format::ratio_value(lo), format::ratio_value(hi));
            if lo == hi {
                format!("{lo} {name}'s")
            } else {
                format!("{lo} to {hi} {name}'s")
            }
        })
        .collect();
    Some(format!(
        "{}, {}: {} was ahead on {} at every {sweep} from {} to {} — {}, significant at each.",
        exp.title,
        first.workload,
        names::series(r, first.best),
        names::metric_label(&exp.headline),
        first.x,
        last.x,
        ranges.join(", ")
    ))
}

fn median(exp: &Experiment, c: &Cell) -> f64 {
    c.summary[&exp.headline].median
}

/// The comparison of `a` and `b` on `metric`, as the ratio a / b whichever way it was stored.
fn comparison<'a>(r: &'a Results, metric: &str, a: &Cell, b: &Cell) -> Option<(&'a Comparison, Estimate)> {
    r.comparisons.iter().filter(|c| c.metric == metric).find_map(|c| {
        if c.a == a.id && c.b == b.id {
            Some((c, c.ratio))
        } else if c.a == b.id && c.b == a.id {
            let e = c.ratio;
            Some((c, Estimate { median: 1.0 / e.median, lo: 1.0 / e.hi, hi: 1.0 / e.lo, n: e.n }))
        } else {
            None
        }
    })
}
