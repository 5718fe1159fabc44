//! The answer first: a few lines that answer "REST or gRPC, and what does a call cost?" for the
//! machine the run was on, one per experiment the suite marks with `answer` — the best REST,
//! gRPC and in-process cell on the headline and how REST and gRPC compare (by the run's own
//! verdicts); across an emulated link, what a kept connection and a new one per call cost in round
//! trips and where they went. An experiment that could not run says why and how to include it.

use crate::doc::comparisons::{figure, EQUAL, NO_DIFFERENCE, TOO_FEW};
use crate::round_trips;
use callbench_results::analysis;
use callbench_results::format;
use callbench_results::model::{higher_is_better, Cell, Experiment, Results};

/// At most ten lines, the first saying where they were measured; none when no experiment answers.
pub fn lines(r: &Results) -> Vec<String> {
    let answered: Vec<&Experiment> = r.experiments.iter().filter(|e| e.answer.is_some()).collect();
    let mut out: Vec<String> = answered.iter().filter_map(|e| line(r, e)).collect();
    if out.is_empty() {
        return out;
    }
    out.truncate(9);
    let env = &r.environment;
    let first = match endpoints_said(r) {
        Some(endpoints) => format!(
            "On this machine ({} CPUs, {}; client on CPUs {:?}), calling {endpoints}, medians of the repetitions:",
            env.cores, env.cpu_model, env.client_cpus
        ),
        None => format!(
            "On this machine ({} CPUs, {}; client on CPUs {:?}, servers on {:?}), medians of the repetitions:",
            env.cores, env.cpu_model, env.client_cpus, env.server_cpus
        ),
    };
    out.insert(0, first);
    out
}

/// `your endpoints (not started by callbench; server CPU measured for rest, not for grpc: give
/// --server-pid)` when the run called a user's endpoints.
fn endpoints_said(r: &Results) -> Option<String> {
    let endpoints: Vec<_> = r.servers.iter().filter_map(|s| Some((s.name.as_str(), s.endpoint.as_ref()?))).collect();
    if endpoints.is_empty() {
        return None;
    }
    let (measured, not): (Vec<_>, Vec<_>) = endpoints.iter().partition(|(_, e)| !e.server_pids.is_empty());
    let names = |list: &[&(&str, _)]| list.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    let cpu = match (measured.is_empty(), not.is_empty()) {
        (_, true) => "server CPU measured through the pids given".to_string(),
        (true, false) => "server CPU not measured: give --server-pid".to_string(),
        (false, false) => {
            format!("server CPU measured for {}, not for {}: give --server-pid", names(&measured), names(&not))
        }
    };
    Some(format!("your endpoints (not started by callbench; {cpu})"))
}

fn line(r: &Results, exp: &Experiment) -> Option<String> {
    let label = exp.answer.as_deref()?;
    if let Some(why) = &exp.skipped {
        return Some(format!("{label}: {why}."));
    }
    let (workload, cells) = answered(r, exp)?;
    // A kept connection against a new one per call: across an emulated link, or to a user's endpoint.
    if cells.iter().any(|c| c.network.is_some() || round_trips::is_cold(c)) {
        return across_link(label, &workload, &cells);
    }
    let best = |family: &str| best(exp, &cells, family);
    let (rest, grpc, inproc) = (best("rest"), best("grpc"), best("inproc"));
    let shown = |name: &str, c: Option<&Cell>| {
        c.map(|c| {
            let figure = format::value_with_unit(&exp.headline, c.summary[&exp.headline].median);
            if c.transport.starts_with("inproc") {
                format!("{name} {figure}")
            } else {
                format!("{name} {figure} ({})", c.server)
            }
        })
    };
    let parts: Vec<String> =
        [shown("REST", rest), shown("gRPC", grpc), shown("in-process", inproc)].into_iter().flatten().collect();
    if parts.is_empty() {
        return None;
    }
    let mut text = format!("{label} ({workload}, {}): {}", crate::names::metric_label(&exp.headline), parts.join(", "));
    if let (Some(a), Some(b)) = (rest, grpc) {
        text.push_str(&format!("; {}", versus(r, exp, a, b)));
    }
    text.push('.');
    Some(text)
}

/// What an answered experiment's line rests on, for the answer's chart: its headline and the cells
/// named, each with its label (`REST`, `gRPC`, `in-process`; across a link or with new connections,
/// `REST, kept` and `REST, new connection`). None when the line has no cell.
pub fn cells<'a>(r: &'a Results, exp: &'a Experiment) -> Option<(&'a str, Vec<(String, &'a Cell)>)> {
    exp.answer.as_ref()?;
    if exp.skipped.is_some() {
        return None;
    }
    let (_, cells) = answered(r, exp)?;
    let mut out = Vec::new();
    let cold_sweep = cells.iter().any(|c| c.network.is_some() || round_trips::is_cold(c));
    for (name, family) in [("REST", "rest"), ("gRPC", "grpc"), ("in-process", "inproc")] {
        if cold_sweep {
            let of = cells.iter().copied().filter(|c| c.transport.starts_with(family));
            let of: Vec<&Cell> = of.collect();
            if let Some(kept) = of.iter().find(|c| !round_trips::is_cold(c)) {
                out.push((format!("{name}, kept"), *kept));
            }
            if let Some(cold) = of.iter().find(|c| round_trips::is_cold(c)) {
                out.push((format!("{name}, new connection"), *cold));
            }
        } else if let Some(c) = best(exp, &cells, family) {
            out.push((name.to_string(), c));
        }
    }
    (!out.is_empty()).then_some((exp.headline.as_str(), out))
}

/// The cells an answer rests on: the experiment's fully measured cells with a headline figure, of
/// its first workload (with that workload's name).
fn answered<'a>(r: &'a Results, exp: &Experiment) -> Option<(String, Vec<&'a Cell>)> {
    let cells: Vec<&Cell> = r
        .cells
        .iter()
        .filter(|c| c.experiment == exp.id && analysis::measured_fully(c) && c.summary.contains_key(&exp.headline))
        .collect();
    let workload = cells.first()?.workload.clone();
    let cells = cells.into_iter().filter(|c| c.workload == workload).collect();
    Some((workload, cells))
}

/// The cell of a family of transports (`rest`, `grpc`, `inproc`) best on the headline.
fn best<'a>(exp: &Experiment, cells: &[&'a Cell], family: &str) -> Option<&'a Cell> {
    let value = |c: &&Cell| c.summary[&exp.headline].median;
    let of = cells.iter().copied().filter(|c| c.transport.starts_with(family));
    if higher_is_better(&exp.headline) {
        of.max_by(|a, b| value(a).total_cmp(&value(b)))
    } else {
        of.min_by(|a, b| value(a).total_cmp(&value(b)))
    }
}

/// `REST / gRPC: 0.77× [0.75 – 0.79], REST ahead` from the run's comparison of the two cells.
fn versus(r: &Results, exp: &Experiment, rest: &Cell, grpc: &Cell) -> String {
    let found = r.comparisons.iter().find(|c| {
        c.metric == exp.headline && ((c.a == rest.id && c.b == grpc.id) || (c.a == grpc.id && c.b == rest.id))
    });
    let Some(c) = found else {
        let ratio = rest.summary[&exp.headline].median / grpc.summary[&exp.headline].median;
        return format!("REST / gRPC {} (not compared)", format::ratio_value(ratio));
    };
    let flipped = c.a != rest.id;
    let ratio = if flipped { c.ratio.inverse() } else { c.ratio };
    let verdict = match c.verdict.as_str() {
        NO_DIFFERENCE | TOO_FEW | EQUAL => c.verdict.clone(),
        _ => {
            let rest_higher = ratio.median > 1.0;
            let ahead = rest_higher == higher_is_better(&exp.headline);
            format!("{} ahead", if ahead { "REST" } else { "gRPC" })
        }
    };
    format!("REST / gRPC {}, {verdict}", figure(c, &ratio))
}

/// `Across … (auth, a measured round trip of 10.2 ms): REST (rust-actix+tls) 10.4 ms on a kept
/// connection (1.0 round trip), 31.5 ms with a new one per call (3.1: TCP 1.0, TLS 1.0, request
/// 1.0); gRPC ...` — the round trips where the link had a delay.
fn across_link(label: &str, workload: &str, cells: &[&Cell]) -> Option<String> {
    let rtt = cells.iter().find_map(|c| round_trips::round_trip_us(c));
    let in_rtt = |us: f64, phases: &str| {
        rtt.map_or(String::new(), |rtt| format!(" ({}{phases})", round_trips::in_round_trips(us, rtt)))
    };
    let mut parts = vec![];
    for (name, family) in [("REST", "rest"), ("gRPC", "grpc")] {
        let of: Vec<&Cell> = cells.iter().copied().filter(|c| c.transport.starts_with(family)).collect();
        let kept = of.iter().find(|c| !round_trips::is_cold(c));
        let cold = of.iter().find(|c| round_trips::is_cold(c));
        let p50 = |c: &Cell| c.summary.get("latency_p50_us").map(|e| e.median);
        let mut said = vec![];
        if let Some((c, us)) = kept.and_then(|c| Some((c, p50(c)?))) {
            let unit = if rtt.is_some() { " round trip" } else { "" };
            said.push(format!("{} {}{}", format::duration_us(us), round_trips::kept_words(c), in_rtt(us, unit)));
        }
        if let Some((c, us)) = cold.and_then(|c| Some((c, p50(c)?))) {
            let phases = round_trips::phases(c).zip(rtt).map_or(String::new(), |(p, rtt)| {
                let tls = p.tls_us.map_or(String::new(), |t| format!(", TLS {}", round_trips::in_round_trips(t, rtt)));
                let lookup =
                    p.lookup_us.map_or(String::new(), |l| format!("lookup {}, ", round_trips::in_round_trips(l, rtt)));
                format!(
                    ": {lookup}TCP {}{tls}, request {}",
                    round_trips::in_round_trips(p.tcp_us, rtt),
                    round_trips::in_round_trips(p.rest_us, rtt)
                )
            });
            said.push(format!("{} with a new connection per call{}", format::duration_us(us), in_rtt(us, &phases)));
        }
        let server = kept.or(cold).map(|c| c.server.clone());
        if let (false, Some(server)) = (said.is_empty(), server) {
            parts.push(format!("{name} ({server}) {}", said.join(", ")));
        }
    }
    let measured = rtt.map_or(String::new(), |rtt| format!(", a measured round trip of {}", format::duration_us(rtt)));
    (!parts.is_empty()).then(|| format!("{label} ({workload}{measured}): {}.", parts.join("; ")))
}

#[cfg(test)]
mod tests;
