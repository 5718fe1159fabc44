//! Connection set-up and round trips: the phases of the calls that opened their own connection
//! (name lookup when a name was looked up per connection, TCP connect, TLS handshake, the rest: as
//! curl's `-w` splits a transfer) and, across an
//! emulated link with a delay, every time counted in the link's measured round trips — what
//! explains a remote call's cost better than the serialiser does.

use crate::names;
use callbench_results::format;
use callbench_results::model::{Cell, Results};

/// Medians (µs) of the phases of the calls that opened a connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phases {
    /// A target named by a name looked up per connection (a user's endpoint).
    pub lookup_us: Option<f64>,
    pub tcp_us: f64,
    pub tls_us: Option<f64>,
    pub rest_us: f64,
}

impl Phases {
    /// In drawing order, with their names.
    pub fn parts(&self) -> Vec<(&'static str, f64)> {
        let mut parts: Vec<(&'static str, f64)> = self.lookup_us.map(|l| ("name lookup", l)).into_iter().collect();
        parts.push(("TCP connect", self.tcp_us));
        parts.extend(self.tls_us.map(|t| ("TLS handshake", t)));
        parts.push(("the request", self.rest_us));
        parts
    }
}

pub fn phases(cell: &Cell) -> Option<Phases> {
    let median = |m: &str| cell.summary.get(m).map(|e| e.median).filter(|v| v.is_finite());
    Some(Phases {
        lookup_us: median("cold_name_lookup_p50_us"),
        tcp_us: median("cold_tcp_connect_p50_us")?,
        tls_us: median("cold_tls_handshake_p50_us"),
        rest_us: median("cold_rest_p50_us")?,
    })
}

/// Whether every call of the cell opened its own connection.
pub fn is_cold(cell: &Cell) -> bool {
    cell.params.get("new_connection_per_call").and_then(|v| v.as_bool()) == Some(true)
}

/// Whether the server closed its connection after every call although the cell kept it (an
/// HTTP/1.0 server): every repetition opened at least one connection per call.
pub fn closed_by_server(cell: &Cell) -> bool {
    !is_cold(cell)
        && !cell.runs.is_empty()
        && cell.runs.iter().all(|r| r.calls_ok > 0 && r.connections_opened >= r.calls_ok)
}

/// How a warm cell's calls met their connection: kept, or new each time because the server closed it.
pub fn kept_words(cell: &Cell) -> &'static str {
    match closed_by_server(cell) {
        true => "on a new connection each (the server closed every one)",
        false => "on a kept connection",
    }
}

/// The round trip the cell's calls paid (µs): the measured RTT of its link, when the link had a
/// delay (at RTT 0 a count of round trips would only measure the link's own cost).
pub fn round_trip_us(cell: &Cell) -> Option<f64> {
    cell.network.as_ref().filter(|n| n.rtt_us > 0.0 && n.measured_rtt_us > 0.0).map(|n| n.measured_rtt_us)
}

/// `3.0` round trips.
pub fn in_round_trips(us: f64, rtt_us: f64) -> String {
    format!("{:.1}", us / rtt_us)
}

/// Whether the experiment has anything to show here: a cell that opened connections, or one
/// across a link.
pub fn shown_for(cells: &[&Cell]) -> bool {
    cells.iter().any(|c| (is_cold(c) && phases(c).is_some()) || c.network.is_some())
}

/// One sentence per cell: what a call cost, and in how many round trips.
/// `rust-actix+tls, auth, rtt=40ms: a cold call took 121 ms, 3.0 round trips of 40.2 ms (TCP
/// connect 1.0, TLS handshake 1.0, the request 1.0).`
pub fn sentence(r: &Results, cell: &Cell) -> Option<String> {
    let exp = r.experiment(&cell.experiment);
    // A sweep over a key of the link (rtt, loss...) is in the link's spec, said after the title.
    let swept_link = exp.and_then(|e| e.sweep.as_deref()).is_some_and(|p| !cell.params.contains_key(p));
    let title = match cell.network.is_some() && swept_link {
        true => format!("{}, {}", names::series(r, cell), cell.workload),
        false => names::cell_title(r, cell),
    };
    describe(title, cell)
}

/// The sentence after the cell's title.
fn describe(mut text: String, cell: &Cell) -> Option<String> {
    let p50 = cell.summary.get("latency_p50_us").map(|e| e.median)?;
    let cold = is_cold(cell);
    let phases = phases(cell).filter(|_| cold);
    if let Some(n) = &cell.network {
        text.push_str(&format!(" across {}", n.spec));
    }
    let what = if cold { "a cold call (a new connection)".to_string() } else { format!("a call {}", kept_words(cell)) };
    text.push_str(&format!(": {what} took {}", format::duration_us(p50)));
    match (round_trip_us(cell), phases) {
        (Some(rtt), phases) => {
            let n = p50 / rtt;
            let unit = if (n - 1.0).abs() < 0.05 { "round trip" } else { "round trips" };
            text.push_str(&format!(", {} {unit} of {}", in_round_trips(p50, rtt), format::duration_us(rtt)));
            if let Some(p) = phases {
                let parts: Vec<String> =
                    p.parts().iter().map(|(name, us)| format!("{name} {}", in_round_trips(*us, rtt))).collect();
                text.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        (None, Some(p)) => {
            let parts: Vec<String> =
                p.parts().iter().map(|(name, us)| format!("{name} {}", format::duration_us(*us))).collect();
            text.push_str(&format!(" ({})", parts.join(", ")));
        }
        (None, None) if cell.network.is_none() => return None,
        (None, None) => {}
    }
    text.push('.');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_results::model::{Estimate, NetworkRecord, RunMetrics};

    fn cell(cold: bool, rtt_us: f64, measured: f64, metrics: &[(&str, f64)]) -> Cell {
        let mut c: Cell = serde_json::from_value(serde_json::json!({
            "id": "cold/auth/rust-actix+tls", "experiment": "cold", "server": "rust-actix+tls",
            "transport": "rest-h1+tls", "workload": "auth", "params": {"new_connection_per_call": cold},
            "status": "ok", "runs": [], "summary": {}, "spectrum": [], "bottleneck": "", "noisy": false
        }))
        .unwrap();
        for (m, v) in metrics {
            c.summary.insert(m.to_string(), Estimate { median: *v, lo: *v, hi: *v, n: 3 });
        }
        c.network = Some(NetworkRecord {
            spec: format!("rtt={}ms", rtt_us / 1000.0),
            rtt_us,
            measured_rtt_us: measured,
            own_rtt_us: 60.0,
        });
        c
    }

    #[test]
    fn a_cold_call_is_counted_in_round_trips_phase_by_phase() {
        let c = cell(
            true,
            40_000.0,
            40_100.0,
            &[
                ("latency_p50_us", 121_000.0),
                ("cold_tcp_connect_p50_us", 40_200.0),
                ("cold_tls_handshake_p50_us", 40_500.0),
                ("cold_rest_p50_us", 40_300.0),
            ],
        );
        let text = describe("rust-actix+tls, auth".into(), &c).unwrap();
        assert!(text.contains("a cold call (a new connection) took 121 ms, 3.0 round trips of 40.1 ms"), "{text}");
        assert!(text.contains("(TCP connect 1.0, TLS handshake 1.0, the request 1.0)"), "{text}");
    }

    #[test]
    fn a_name_looked_up_per_connection_is_the_first_phase() {
        let c = cell(
            true,
            20_000.0,
            20_000.0,
            &[
                ("latency_p50_us", 60_300.0),
                ("cold_name_lookup_p50_us", 20_100.0),
                ("cold_tcp_connect_p50_us", 20_100.0),
                ("cold_rest_p50_us", 20_100.0),
            ],
        );
        let text = describe("mine, call".into(), &c).unwrap();
        assert!(text.contains("(name lookup 1.0, TCP connect 1.0, the request 1.0)"), "{text}");
    }

    #[test]
    fn a_warm_call_is_one_round_trip_and_rtt_zero_counts_none() {
        let warm = cell(false, 40_000.0, 40_100.0, &[("latency_p50_us", 40_300.0)]);
        let text = describe("w".into(), &warm).unwrap();
        assert!(text.contains("kept connection took 40.3 ms, 1.0 round trip of 40.1 ms."), "{text}");
        // A server that closes every connection (HTTP/1.0): the warm cell's calls each opened one.
        let mut closed = cell(false, 40_000.0, 40_100.0, &[("latency_p50_us", 80_500.0)]);
        let run = |calls_ok, connections_opened| RunMetrics { calls_ok, connections_opened, ..RunMetrics::default() };
        closed.runs = vec![run(10, 11), run(12, 12)];
        let text = describe("c".into(), &closed).unwrap();
        assert!(text.contains("a call on a new connection each (the server closed every one) took 80.5 ms"), "{text}");
        closed.runs.push(run(10, 1));
        assert!(!closed_by_server(&closed), "one repetition kept its connection");
        let at_zero = cell(
            true,
            0.0,
            70.0,
            &[("latency_p50_us", 480.0), ("cold_tcp_connect_p50_us", 60.0), ("cold_rest_p50_us", 120.0)],
        );
        let text = describe("z".into(), &at_zero).unwrap();
        assert!(!text.contains("round trip") && text.contains("(TCP connect 60.0 µs, the request 120 µs)"), "{text}");
    }
}
