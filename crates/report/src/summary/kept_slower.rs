//! A kept connection slower than a new one: reusing a connection saves its handshakes, so a call
//! on a kept connection that takes tens of milliseconds while one on a fresh connection takes far
//! less has its answer held back, most often by Nagle's algorithm on the server meeting the
//! client's delayed acknowledgement. Found by hand against Python's ThreadingHTTPServer
//! (bench/results/stock-server-probes-*.md).

use crate::names;
use crate::round_trips::{closed_by_server, is_cold};
use callbench_results::format;
use callbench_results::model::{Cell, Experiment, Results};

/// A kept call this slow (µs) is in the range of a delayed acknowledgement (Linux: 40 ms to 200
/// ms), far above any loopback or LAN call's own time.
const SLOW_KEPT_US: f64 = 20_000.0;

/// How many times a new connection's call the kept one must take: a new connection pays its
/// handshakes, so even twice its time on a kept one is not what reuse costs.
const TIMES_SLOWER: f64 = 4.0;

/// One sentence for each kept cell whose calls took [`TIMES_SLOWER`] times those of the same
/// cell with a new connection per call, and at least [`SLOW_KEPT_US`].
pub fn sentences(r: &Results, exp: &Experiment) -> Vec<String> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
    let mut out = vec![];
    for kept in cells.iter().filter(|c| !is_cold(c) && !closed_by_server(c)) {
        let Some(new) = cells.iter().find(|c| is_cold(c) && same_but_connection(kept, c)) else { continue };
        let (Some(kept_us), Some(new_us)) = (p50(kept), p50(new)) else { continue };
        if kept_us >= SLOW_KEPT_US && kept_us >= TIMES_SLOWER * new_us {
            out.push(format!(
                "{}: a call on a kept connection took {}, with a new connection per call {}: reusing a connection \
                 saves its handshakes, so the answers on a kept connection are held back. The likely cause: the \
                 server writes an answer in two sends with Nagle's algorithm on, and the second waits for the \
                 client's delayed acknowledgement of the first (up to 40 ms on Linux; a new connection's first \
                 segments are acknowledged at once); TCP_NODELAY on the server's sockets removes the wait.",
                names::series(r, kept),
                format::duration_us(kept_us),
                format::duration_us(new_us)
            ));
        }
    }
    out
}

fn p50(c: &Cell) -> Option<f64> {
    c.summary.get("latency_p50_us").map(|e| e.median).filter(|v| v.is_finite() && *v > 0.0)
}

/// The same server, workload, transport and settings, but for a new connection per call.
fn same_but_connection(a: &Cell, b: &Cell) -> bool {
    let rest = |c: &Cell| {
        let mut p = c.params.clone();
        p.remove("new_connection_per_call");
        p
    };
    a.server == b.server && a.workload == b.workload && a.transport == b.transport && rest(a) == rest(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_cell::cell;
    use callbench_results::model::{Estimate, RunMetrics};

    fn with_p50(id: &str, new_connection: bool, p50_us: f64) -> Cell {
        let mut c =
            cell(id, "new-connection", vec![RunMetrics { calls_ok: 10, connections_opened: 1, ..Default::default() }]);
        c.params.insert("new_connection_per_call".into(), new_connection.into());
        c.summary.insert("latency_p50_us".into(), Estimate { median: p50_us, lo: p50_us, hi: p50_us, n: 1 });
        c
    }

    fn results(cells: Vec<Cell>) -> Results {
        let exp = crate::test_cell::experiment("new-connection", "latency_p50_us");
        crate::test_cell::results(1, vec![exp], cells)
    }

    #[test]
    fn a_kept_connection_far_slower_than_a_new_one_is_named() {
        let r = results(vec![with_p50("kept", false, 44_000.0), with_p50("new", true, 195.0)]);
        let found = sentences(&r, &r.experiments[0]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("s: a call on a kept connection took 44.0 ms, with a new connection per call 195 µs"),
            "{}",
            found[0]
        );
        assert!(found[0].contains("TCP_NODELAY"), "{}", found[0]);
    }

    #[test]
    fn usual_cells_say_nothing() {
        // A kept call cheaper than a new connection's, as it should be.
        let r = results(vec![with_p50("kept", false, 16.0), with_p50("new", true, 232.0)]);
        assert!(sentences(&r, &r.experiments[0]).is_empty());
        // Across a long link a kept call takes tens of ms, and a new connection's more.
        let r = results(vec![with_p50("kept", false, 25_000.0), with_p50("new", true, 75_000.0)]);
        assert!(sentences(&r, &r.experiments[0]).is_empty());
        // A slow server, whatever the connection.
        let r = results(vec![with_p50("kept", false, 30_000.0), with_p50("new", true, 30_500.0)]);
        assert!(sentences(&r, &r.experiments[0]).is_empty());
    }
}
