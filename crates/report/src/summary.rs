//! What a run found, in a few plain sentences generated from the results: per experiment and
//! workload which server was ahead on the headline and by how much (with the ratio's interval),
//! which differences are within noise, what the bottleneck was, which cells cannot be trusted,
//! and how the seed articles' figures compare. Printed first by `report.md`, `report.html` and
//! the end of `callbench run`.

use crate::doc::comparisons::{NO_DIFFERENCE, TOO_FEW};
use crate::format;
use crate::model::{Cell, Comparison, Experiment, Results, METRICS};
use crate::names;
use std::collections::BTreeMap;

/// The sentences, most important first.
pub fn sentences(r: &Results) -> Vec<String> {
    let mut out = vec![];
    for exp in &r.experiments {
        out.extend(experiment(r, exp));
    }
    out.extend(trust(r));
    out.extend(references(r));
    out
}

fn higher_is_better(metric: &str) -> bool {
    METRICS.iter().find(|(m, _, _)| *m == metric).is_some_and(|(_, _, more)| *more)
}

/// One sentence per workload (and swept value) of the experiment, then where the bottleneck was.
fn experiment(r: &Results, exp: &Experiment) -> Vec<String> {
    let mut groups: BTreeMap<(String, String), Vec<&Cell>> = BTreeMap::new();
    for c in r.cells.iter().filter(|c| c.experiment == exp.id && c.summary.contains_key(&exp.headline)) {
        let x = names::swept_value(Some(exp), c).unwrap_or_default();
        groups.entry((c.workload.clone(), x)).or_default().push(c);
    }
    let mut out = vec![];
    for ((workload, x), all) in groups {
        // In-process calls are the baseline, not a contender: the ranking is of calls over the wire.
        let (inproc, mut cells): (Vec<&Cell>, Vec<&Cell>) = all.into_iter().partition(|c| c.transport == "inproc");
        if cells.len() < 2 {
            continue;
        }
        let better = higher_is_better(&exp.headline);
        let key = |c: &&Cell| c.summary[&exp.headline].median;
        cells.sort_by(|a, b| if better { key(b).total_cmp(&key(a)) } else { key(a).total_cmp(&key(b)) });
        let best = cells[0];
        let label = names::metric_label(&exp.headline);
        let at = if x.is_empty() { String::new() } else { format!(", {} = {x}", exp.sweep.as_deref().unwrap_or("")) };
        let mut text = format!(
            "{}, {workload}{at}: {} was ahead on {label} at {}",
            exp.title,
            names::series(r, best),
            format::value_with_unit(&exp.headline, key(&best))
        );
        let (mut behind, mut tied) = (vec![], vec![]);
        for other in &cells[1..] {
            let name = names::series(r, other);
            match comparison(r, &exp.headline, best, other) {
                Some((c, ratio)) if c.verdict == NO_DIFFERENCE || c.verdict == TOO_FEW => tied.push(format!(
                    "{name} ({}, {})",
                    format::ratio(&ratio),
                    if c.verdict == TOO_FEW { "too few repetitions to tell" } else { "within noise" }
                )),
                Some((_, ratio)) => behind.push(format!("{} {name}'s", format::ratio(&ratio))),
                None => behind.push(format!("{name} {}", format::value_with_unit(&exp.headline, key(other)))),
            }
        }
        if !behind.is_empty() {
            text.push_str(&format!(" — {}", behind.join(", ")));
        }
        if !tied.is_empty() {
            text.push_str(&format!("; no significant difference from {}", tied.join(", ")));
        }
        if let Some(baseline) = inproc.first() {
            text.push_str(&format!(
                " (in-process baseline: {})",
                format::value_with_unit(&exp.headline, baseline.summary[&exp.headline].median)
            ));
        }
        text.push('.');
        out.push(text);
    }
    if let Some(b) = bottlenecks(r, exp) {
        out.push(b);
    }
    out
}

/// The comparison of `a` and `b` on `metric`, as the ratio a / b whichever way it was stored.
fn comparison<'a>(
    r: &'a Results,
    metric: &str,
    a: &Cell,
    b: &Cell,
) -> Option<(&'a Comparison, crate::model::Estimate)> {
    r.comparisons.iter().filter(|c| c.metric == metric).find_map(|c| {
        if c.a == a.id && c.b == b.id {
            Some((c, c.ratio))
        } else if c.a == b.id && c.b == a.id {
            let e = c.ratio;
            Some((c, crate::model::Estimate { median: 1.0 / e.median, lo: 1.0 / e.hi, hi: 1.0 / e.lo, n: e.n }))
        } else {
            None
        }
    })
}

/// `Bottleneck: the server in 3 of 4 cells, the client in 1 (in-process).`
fn bottlenecks(r: &Results, exp: &Experiment) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in r.cells.iter().filter(|c| c.experiment == exp.id && !c.runs.is_empty()) {
        if !c.bottleneck.is_empty() && c.bottleneck != "-" {
            *counts.entry(c.bottleneck.as_str()).or_default() += 1;
        }
    }
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let meaning = |side: &str| match side {
        "server" => "the server's core was busy",
        "client" => "callbench's core was busy",
        "both" => "both cores were busy",
        _ => "neither core was busy: latency-bound or paced",
    };
    let parts: Vec<String> =
        counts.iter().map(|(side, n)| format!("{side} in {n} of {total} cells ({})", meaning(side))).collect();
    Some(format!("{}: bottleneck {}.", exp.title, parts.join(", ")))
}

/// Noisy and disturbed cells, and what the steadiness probe warned of.
fn trust(r: &Results) -> Vec<String> {
    let mut out = vec![];
    let noisy: Vec<&str> = r.cells.iter().filter(|c| c.noisy).map(|c| c.id.as_str()).collect();
    let disturbed: Vec<&Cell> = r.cells.iter().filter(|c| c.disturbed.is_some()).collect();
    if !noisy.is_empty() {
        out.push(format!(
            "{} of {} cells are noisy (repetitions more than {:.0}% from their median): {}.",
            noisy.len(),
            r.cells.len(),
            crate::stats::NOISY_SPREAD * 100.0,
            noisy.join(", ")
        ));
    }
    for c in disturbed {
        out.push(format!(
            "{} was measured while the machine was disturbed ({}).",
            c.id,
            c.disturbed.as_deref().unwrap_or("")
        ));
    }
    if let Some(s) = &r.steadiness {
        for w in &s.warnings {
            out.push(format!("Before the run: {w}."));
        }
    }
    out
}

/// Each seed article's figure beside ours, and why they differ in kind.
fn references(r: &Results) -> Vec<String> {
    let mut out = vec![];
    for exp in &r.experiments {
        for reference in &exp.references {
            let ours = reference.cell.as_deref().and_then(|id| r.cell(id)).and_then(|c| {
                let metric = reference.metric.as_deref()?;
                c.summary.get(metric).map(|e| format::value_with_unit(metric, e.median))
            });
            let Some(ours) = ours else { continue };
            let why = if reference.note.is_empty() { String::new() } else { format!(" ({})", reference.note) };
            out.push(format!(
                "Seed {} reported {} for {}; here {ours}{why}.",
                reference.seed, reference.article, reference.what
            ));
        }
    }
    out
}
