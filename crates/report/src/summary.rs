//! What a run found, in a few plain sentences generated from the results: per experiment and
//! workload which server was ahead on the headline and by how much (with the ratio's interval,
//! see [`findings`]), which differences are within noise, what the bottleneck was, rounds in which
//! the machine changed speed ([`machine_speed`]), which cells cannot be trusted, and how the seed
//! articles' figures compare (and why they differ). Printed first by `report.md`, `report.html`
//! and the end of `callbench run`.

pub mod answer;
mod findings;
mod kept_slower;
mod loss;
mod machine_speed;

use callbench_results::format;
use callbench_results::model::{Cell, Experiment, Results};
use std::collections::BTreeMap;

/// The sentences, most important first.
pub fn sentences(r: &Results) -> Vec<String> {
    let mut out = vec![];
    for exp in &r.experiments {
        out.extend(findings::sentences(r, exp));
        out.extend(loss::sentences(r, exp));
        out.extend(bottlenecks(r, exp));
        out.extend(machine_speed::sentence(r, exp));
        out.extend(round_trips(r, exp));
        out.extend(kept_slower::sentences(r, exp));
    }
    out.extend(machine_speed::placements(r));
    out.extend(trust(r));
    // The seed table, when the run has one, sets each article's figure beside its reproduction
    // under the article's conditions; a loopback cell beside it would compare unlike things.
    if r.seeds.is_empty() {
        out.extend(references(r));
    }
    out
}

/// What a ratio in the seed table is: the run's comparison when it made one, else the quotient.
pub const SEED_RATIO_RULE: &str = "A ratio with a 95% interval [lo – hi] is the run's comparison of the two cells: the median of the quotients of every pair of their repetitions (Hodges–Lehmann), which differs from the quotient of the two medians beside it when the repetitions spread; a ratio without an interval is the quotient of the two medians.";

/// The seed table as lines for a terminal: per row, what the article reported and what its
/// reproduction measured, then why and the command that reproduces it.
pub fn seed_lines(r: &Results) -> Vec<String> {
    let mut out = vec![];
    for row in &r.seeds {
        out.push(format!("Seed {}, {}: the article {}; reproduced: {}.", row.seed, row.what, row.article, row.here));
        out.push(format!("    Why: {} Reproduce: {}", row.why, row.command));
    }
    if !out.is_empty() {
        out.push(SEED_RATIO_RULE.to_string());
    }
    out
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
        "client" => "the client's core was busy",
        "both" => "both cores were busy",
        "link" => "the emulated link's forwarder was busy",
        _ => "neither core was busy: latency-bound or paced",
    };
    let parts: Vec<String> =
        counts.iter().map(|(side, n)| format!("{side} in {n} of {total} cells ({})", meaning(side))).collect();
    Some(format!("{}: bottleneck {}.", exp.title, parts.join(", ")))
}

/// `Cold TLS calls, across rtt=40ms: a call cost 3.0 round trips (rust-actix+tls, cold), 2.1 (rust-tonic+tls,
/// cold).` — at the experiment's longest delay, where round trips explain the most; the cells of one server
/// and kind of call (a sweep of calls, of payloads) as one range.
fn round_trips(r: &Results, exp: &Experiment) -> Option<String> {
    let across: Vec<(&Cell, f64)> = r
        .cells
        .iter()
        .filter(|c| c.experiment == exp.id)
        .filter_map(|c| Some((c, crate::round_trips::round_trip_us(c)?)))
        .filter(|(c, _)| c.summary.contains_key("latency_p50_us"))
        .collect();
    let longest = across.iter().map(|(c, _)| c.network.as_ref().map_or(0.0, |n| n.rtt_us)).fold(0.0, f64::max);
    let at_longest: Vec<&(&Cell, f64)> =
        across.iter().filter(|(c, _)| c.network.as_ref().is_some_and(|n| n.rtt_us == longest)).collect();
    let (first, _) = at_longest.first()?;
    // (series, kind) in order of appearance -> (fewest, most round trips, cells)
    type Group<'a> = ((String, &'a str), (f64, f64, usize));
    let mut groups: Vec<Group> = Vec::new();
    for (c, rtt) in &at_longest {
        let kind = match (crate::round_trips::is_cold(c), crate::round_trips::closed_by_server(c)) {
            (true, _) => "cold",
            (false, true) => "a new connection per call: the server closed each",
            (false, false) => "kept connection",
        };
        let key = (crate::names::series(r, c), kind);
        let n = c.summary["latency_p50_us"].median / rtt;
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, (lo, hi, count))) => (*lo, *hi, *count) = (lo.min(n), hi.max(n), *count + 1),
            None => groups.push((key, (n, n, 1))),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|((series, kind), (lo, hi, count))| {
            let (lo, hi) = (crate::round_trips::in_round_trips(*lo, 1.0), crate::round_trips::in_round_trips(*hi, 1.0));
            let range = if lo == hi { lo } else { format!("{lo}–{hi}") };
            let cells = if *count > 1 { format!(", {count} cells") } else { String::new() };
            format!("{range} ({series}, {kind}{cells})")
        })
        .collect();
    let spec = first.network.as_ref().map_or(String::new(), |n| n.spec.clone());
    Some(format!("{}, across {spec}: a call cost {} round trips.", exp.title, parts.join(", ")))
}

/// Noisy and disturbed cells, and what the steadiness probe warned of.
fn trust(r: &Results) -> Vec<String> {
    let mut out = vec![];
    let noisy: Vec<&str> = r.cells.iter().filter(|c| c.noisy).map(|c| c.id.as_str()).collect();
    let disturbed: Vec<&Cell> = r.cells.iter().filter(|c| c.disturbed.is_some()).collect();
    if !noisy.is_empty() {
        out.push(format!(
            "{} of {} {} noisy (a 95% interval reaching more than {:.0}% from the median): {}.",
            noisy.len(),
            r.cells.len(),
            if noisy.len() == 1 { "cells is" } else { "cells are" },
            callbench_results::stats::NOISY_SPREAD * 100.0,
            noisy.join(", ")
        ));
    }
    let why = |c: &Cell| c.disturbed.clone().unwrap_or_default();
    if disturbed.len() <= 2 {
        for c in &disturbed {
            out.push(format!("{} was measured while the machine was disturbed ({}).", c.id, why(c)));
        }
    } else {
        // A busy machine disturbs every cell: one sentence, not one per cell.
        let ids: Vec<&str> = disturbed.iter().map(|c| c.id.as_str()).collect();
        out.push(format!(
            "{} of {} cells were measured while the machine was disturbed, their re-runs too (e.g. {}: {}): {}.",
            disturbed.len(),
            r.cells.len(),
            disturbed[0].id,
            why(disturbed[0]),
            ids.join(", ")
        ));
    }
    let unmeasured: Vec<String> = r
        .servers
        .iter()
        .filter_map(|s| {
            s.endpoint.as_ref().filter(|e| e.server_pids.is_empty()).map(|e| format!("{} ({})", s.name, e.url))
        })
        .collect();
    if !unmeasured.is_empty() {
        out.push(format!(
            "Server CPU was not measured for {}: callbench did not start {}; give --server-pid PID to measure it.",
            unmeasured.join(", "),
            if unmeasured.len() == 1 { "it" } else { "them" }
        ));
    }
    if let Some(s) = r.steadiness.as_ref().filter(|s| !s.warnings.is_empty()) {
        out.push(format!("Before the run: {}.", s.warnings.join("; ")));
    }
    out
}

/// Each seed article's figure beside ours, and why they differ in kind.
fn references(r: &Results) -> Vec<String> {
    let mut out = vec![];
    for exp in &r.experiments {
        for reference in &exp.references {
            // As the reference table finds them: ids relative to the experiment, the headline by default.
            let metric = reference.metric.as_deref().unwrap_or(&exp.headline);
            let ours = reference
                .cell
                .as_deref()
                .and_then(|id| crate::doc::references::find_cell(r, exp, id))
                .and_then(|c| c.summary.get(metric).map(|e| format::value_with_unit(metric, e.median)));
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
