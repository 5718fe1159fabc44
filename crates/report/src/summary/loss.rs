//! An experiment that sweeps the link's loss, in words: which server's calls held up as loss rose
//! (the headline, and the median beside a tail), and what the link and the client's transport
//! counted at the highest loss: the packets dropped each way, the TCP segments or QUIC packets
//! sent again, and how many calls each round trip carried against the loss-free run.

use crate::names;
use callbench_results::format;
use callbench_results::model::{higher_is_better, Cell, Experiment, Results};

/// Two sentences per workload for an experiment swept over `loss`; none for any other.
pub fn sentences(r: &Results, exp: &Experiment) -> Vec<String> {
    if exp.sweep.as_deref() != Some("loss") {
        return vec![];
    }
    let mut workloads: Vec<&str> = vec![];
    for c in r.cells.iter().filter(|c| c.experiment == exp.id) {
        if !workloads.contains(&c.workload.as_str()) {
            workloads.push(&c.workload);
        }
    }
    workloads.into_iter().flat_map(|w| workload(r, exp, w)).collect()
}

/// One server's cells of a workload, from the least loss to the most.
struct Series<'a> {
    name: String,
    cells: Vec<&'a Cell>,
}

impl Series<'_> {
    fn first(&self) -> &Cell {
        self.cells[0]
    }
    fn last(&self) -> &Cell {
        self.cells[self.cells.len() - 1]
    }
    /// How many times worse the metric was at the most loss than at the least (>1: worse).
    fn worsening(&self, metric: &str) -> Option<f64> {
        let (a, b) = (median(self.first(), metric)?, median(self.last(), metric)?);
        let ratio = if higher_is_better(metric) { a / b } else { b / a };
        ratio.is_finite().then_some(ratio)
    }
}

fn workload(r: &Results, exp: &Experiment, workload: &str) -> Vec<String> {
    let mut all: Vec<Series> = vec![];
    let measured = r.cells.iter().filter(|c| {
        c.experiment == exp.id && c.workload == workload && c.x.is_some() && median(c, &exp.headline).is_some()
    });
    for c in measured {
        let name = names::series(r, c);
        match all.iter_mut().find(|s| s.name == name) {
            Some(s) => s.cells.push(c),
            None => all.push(Series { name, cells: vec![c] }),
        }
    }
    for s in &mut all {
        s.cells.sort_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
    }
    all.retain(|s| s.cells.len() >= 2 && s.first().x != s.last().x);
    if all.len() < 2 {
        return vec![];
    }
    all.sort_by(|a, b| {
        let w = |s: &Series| s.worsening(&exp.headline).unwrap_or(f64::INFINITY);
        w(a).total_cmp(&w(b))
    });
    let (from, to) = (percent(all[0].first()), percent(all[0].last()));
    let mut out = vec![held_up(exp, workload, &all, &from, &to)];
    out.extend(by_connections(&all, &from, &to));
    out.push(counted(&all, &to));
    out.extend(controllers(r, &all));
    out
}

/// What decides a lost packet's cost besides the protocol, when TCP and QUIC series meet and the
/// results record TCP's congestion control (older files do not).
fn controllers(r: &Results, all: &[Series]) -> Option<String> {
    let tcp = &r.environment.tcp_congestion_control;
    let quic = all.iter().any(|s| median(s.last(), "quic_packets_lost").is_some());
    let over_tcp = all.iter().any(|s| median(s.last(), "quic_packets_lost").is_none());
    (!tcp.is_empty() && quic && over_tcp).then(|| {
        format!(
            "Each sender's congestion control decides what a lost packet costs as much as the protocol does: TCP's was \
             {tcp} here (the kernel's net.ipv4.tcp_congestion_control, the link's namespaces alike); QUIC's is the QUIC \
             stack's own, whatever the kernel's."
        )
    })
}

/// The median call's slowdown grouped by how many connections carried the calls, when the series
/// differ in that: what a loss on one shared connection costs the calls behind it (head-of-line
/// blocking on TCP) against calls spread over many. `The median call at loss 3% against 0%: on 1
/// connection 1.59× (A), 3.89× (B); on 50 connections 0.99× (C).`
fn by_connections(all: &[Series], from: &str, to: &str) -> Option<String> {
    // Calls that each open a connection share none.
    if all.iter().any(|s| crate::round_trips::is_cold(s.last())) {
        return None;
    }
    let mut groups: Vec<(u64, Vec<String>)> = vec![];
    for s in all {
        let connections = median(s.last(), "connections_opened")?.round() as u64;
        let slower = format!("{} ({})", format::ratio_value(s.worsening("latency_p50_us")?), s.name);
        match groups.iter_mut().find(|(n, _)| *n == connections) {
            Some((_, of)) => of.push(slower),
            None => groups.push((connections, vec![slower])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    groups.sort_by_key(|(n, _)| *n);
    let parts: Vec<String> = groups
        .iter()
        .map(|(n, of)| format!("on {n} connection{} {}", if *n == 1 { "" } else { "s" }, of.join(", ")))
        .collect();
    Some(format!("The median call at loss {to} against {from}: {}.", parts.join("; ")))
}

/// `…, students: from loss 0% to 3%, p99 latency grew least for A (42.2 ms → 336 ms, 8.0×), then
/// B (…), and most for C (…); p50 latency: A 40.2 ms → 77.1 ms, ….`
fn held_up(exp: &Experiment, workload: &str, all: &[Series], from: &str, to: &str) -> String {
    let label = names::metric_label(&exp.headline);
    let change = |s: &Series, metric: &str| -> String {
        let shown = |c: &Cell| median(c, metric).map_or("–".into(), |v| format::value_with_unit(metric, v));
        let ratio = s.worsening(metric).map_or(String::new(), |w| format!(", {}", format::ratio_value(w)));
        format!("{} → {}{ratio}", shown(s.first()), shown(s.last()))
    };
    let verb = if higher_is_better(&exp.headline) { "fell" } else { "grew" };
    let mut parts: Vec<String> = all.iter().map(|s| format!("{} ({})", s.name, change(s, &exp.headline))).collect();
    let last = parts.pop().unwrap_or_default();
    let mut text = format!("{}, {workload}: from loss {from} to {to}, {label} {verb} least for ", exp.title);
    text.push_str(&parts[0]);
    if parts.len() > 1 {
        text.push_str(&format!(", then {}", parts[1..].join(", ")));
    }
    text.push_str(&format!(", and most for {last}"));
    if exp.headline != "latency_p50_us" {
        let p50: Vec<String> = all.iter().map(|s| format!("{} {}", s.name, change(s, "latency_p50_us"))).collect();
        text.push_str(&format!("; p50 latency: {}", p50.join(", ")));
    }
    text.push('.');
    text
}

/// `At loss 3%, per run: A: the link dropped 70 packets up and 113 down, TCP resent 60 segments,
/// 25.6 calls a round trip (49.4 at loss 0%); ….`
fn counted(all: &[Series], to: &str) -> String {
    let per: Vec<String> = all
        .iter()
        .map(|s| {
            let (c, base) = (s.last(), s.first());
            let mut bits = vec![];
            if let (Some(up), Some(down)) = (median(c, "link_lost_up"), median(c, "link_lost_down")) {
                bits.push(format!("the link dropped {up:.0} packets up and {down:.0} down"));
            }
            match (median(c, "quic_packets_lost"), median(c, "tcp_retransmitted")) {
                (Some(lost), _) => bits.push(format!(
                    "its QUIC client declared {lost:.0} of its own lost and cut its window {:.0} times",
                    median(c, "quic_congestion_events").unwrap_or(0.0)
                )),
                (None, Some(resent)) => bits.push(format!("the client's TCP resent {resent:.0} segments")),
                (None, None) => {}
            }
            if let (Some(now), Some(then)) = (per_round_trip(c), per_round_trip(base)) {
                bits.push(format!("{now:.1} calls a round trip ({then:.1} at loss {})", percent(base)));
            }
            format!("{}: {}", s.name, if bits.is_empty() { "nothing counted".into() } else { bits.join(", ") })
        })
        .collect();
    format!("At loss {to}, per run: {}.", per.join("; "))
}

/// Calls answered per round trip of the link (throughput × measured RTT): with N in flight, N when
/// every call takes one round trip; fewer when calls wait on lost packets or on a sender's window.
fn per_round_trip(c: &Cell) -> Option<f64> {
    let rtt = crate::round_trips::round_trip_us(c)?;
    Some(median(c, "throughput_per_s")? * rtt / 1e6)
}

/// The cell's loss as a percentage: `0%`, `0.1%`, `3%`.
fn percent(c: &Cell) -> String {
    let percent = c.x.unwrap_or(0.0) * 100.0;
    let text = format!("{percent:.2}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

fn median(c: &Cell, metric: &str) -> Option<f64> {
    c.summary.get(metric).map(|e| e.median).filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_results::model::{Latency, LinkUse, NetworkRecord, OutsideCounts, QuicUse, RunMetrics};

    /// A cell of three equal runs across a 40 ms link losing `loss`, from the runs' own records.
    fn cell(server: &str, loss: f64, p99_us: f64, throughput: f64) -> Cell {
        let lost = |n: f64| (loss * n) as u64;
        let run = RunMetrics {
            throughput_per_s: throughput,
            latency_us: Some(Latency { p50: p99_us / 2.0, p99: p99_us, ..Default::default() }),
            link: Some(LinkUse {
                lost: lost(3000.0),
                lost_up: lost(1000.0),
                lost_down: lost(2000.0),
                ..Default::default()
            }),
            quic: (server == "h3").then(|| QuicUse {
                packets_sent: 900,
                packets_lost: lost(900.0),
                congestion_events: lost(500.0),
            }),
            outside: Some(OutsideCounts { retransmitted_segments: lost(800.0), ..Default::default() }),
            connections_opened: if server == "h1" { 50 } else { 1 },
            ..Default::default()
        };
        let mut c = Cell {
            server: server.into(),
            workload: "students".into(),
            transport: server.into(),
            x: Some(loss),
            network: Some(NetworkRecord {
                spec: format!("rtt=40ms,loss={loss}"),
                rtt_us: 40_000.0,
                measured_rtt_us: 40_000.0,
                own_rtt_us: 50.0,
            }),
            ..crate::test_cell::cell(&format!("{server}-{loss}"), "fifty", vec![run.clone(), run.clone(), run])
        };
        callbench_results::analysis::summarise(&mut c, "latency_p99_us", 0.0, 1, 1);
        c
    }

    fn results(exp: &Experiment, cells: Vec<Cell>) -> Results {
        crate::test_cell::results(3, vec![exp.clone()], cells)
    }

    #[test]
    fn the_server_that_held_up_comes_first_with_the_links_counts() {
        let exp = Experiment {
            title: "Fifty in flight".into(),
            sweep: Some("loss".into()),
            ..crate::test_cell::experiment("fifty", "latency_p99_us")
        };
        let cells = vec![
            cell("h2", 0.0, 42_000.0, 1200.0),
            cell("h3", 0.0, 45_000.0, 1150.0),
            cell("h2", 0.03, 336_000.0, 640.0),
            cell("h3", 0.03, 90_000.0, 1000.0),
        ];
        let r = results(&exp, cells.clone());
        let s = sentences(&r, &exp);
        assert_eq!(s.len(), 2, "one connection each: no sentence by connections {s:?}");
        let (held, counted) = (&s[0], &s[1]);
        assert!(
            held.starts_with("Fifty in flight, students: from loss 0% to 3%, p99 latency grew least for h3 (45"),
            "{held}"
        );
        assert!(held.contains("and most for h2 (42.0 ms → 336 ms, 8.00×)"), "{held}");
        assert!(held.contains("; p50 latency: h3 22.5 ms → 45.0 ms"), "{held}");
        assert!(
            counted.starts_with("At loss 3%, per run: h3: the link dropped 30 packets up and 60 down"),
            "{counted}"
        );
        assert!(
            counted.contains("its QUIC client declared 27 of its own lost and cut its window 15 times"),
            "{counted}"
        );
        assert!(
            counted.contains("h2: the link dropped 30 packets up and 60 down, the client's TCP resent 24 segments, 25.6 calls a round trip (48.0 at loss 0%)"),
            "{counted}"
        );
        let mut more = cells.clone();
        more.extend([cell("h1", 0.0, 43_000.0, 1190.0), cell("h1", 0.03, 60_000.0, 1100.0)]);
        let s = sentences(&results(&exp, more), &exp);
        assert_eq!(
            s[1],
            "The median call at loss 3% against 0%: on 1 connection 2.00× (h3), 8.00× (h2); on 50 connections 1.40× (h1)."
        );
        let mut recorded = results(&exp, cells.clone());
        recorded.environment.tcp_congestion_control = "bbr".into();
        let s = sentences(&recorded, &exp);
        assert!(s.last().is_some_and(|l| l.contains("TCP's was bbr here")), "{s:?}");
        let tcp_only: Vec<Cell> = cells.iter().filter(|c| c.server == "h2").cloned().collect();
        let s = sentences(&results(&exp, tcp_only), &exp);
        assert!(s.iter().all(|l| !l.contains("congestion control")), "{s:?}");
        let other = Experiment { sweep: Some("rtt".into()), ..exp };
        assert!(sentences(&r, &other).is_empty(), "only a sweep of loss");
    }
}
