//! Bytes and connections counted outside the client: in an experiment whose clients run in a
//! network namespace of their own (a veth pair to the servers', or the emulated link), what that
//! namespace's kernel counted over a run, per call.

use callbench_link::counters::Counts;
use callbench_results::model::OutsideCounts;

/// Who counted the calls the figures divide by.
pub enum CountedBy {
    /// The calls the server says it answered over the same span.
    Server,
    /// The calls the client counted.
    Client,
}

/// Over which span the counters were read.
pub enum Span {
    /// From before the client started to after it ended.
    Run,
    /// callbench's measured window (after its warm-up), as its engine counts its own wire bytes.
    Window,
}

/// `c` per call of `calls`, with the `connections` the client opened over its whole run; None
/// without a call to divide by.
pub fn per_call(c: &Counts, connections: u64, calls: u64, counted_by: CountedBy, span: Span) -> Option<OutsideCounts> {
    (calls > 0).then(|| OutsideCounts {
        ip_sent_per_call: c.ip_bytes_out as f64 / calls as f64,
        ip_received_per_call: c.ip_bytes_in as f64 / calls as f64,
        packets_sent: c.packets_out,
        packets_received: c.packets_in,
        connections_opened: connections,
        retransmitted_segments: c.tcp_retransmitted,
        calls,
        calls_counted_by: match counted_by {
            CountedBy::Server => "server",
            CountedBy::Client => "client",
        }
        .into(),
        span: match span {
            Span::Run => "run",
            Span::Window => "window",
        }
        .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_per_call_and_counts_stay_whole() {
        let c =
            Counts { ip_bytes_out: 1000, ip_bytes_in: 3000, packets_out: 9, tcp_active_opens: 2, ..Counts::default() };
        let o = per_call(&c, 2, 10, CountedBy::Server, Span::Run).unwrap();
        assert_eq!((o.ip_sent_per_call, o.ip_received_per_call), (100.0, 300.0));
        assert_eq!((o.packets_sent, o.connections_opened, o.calls), (9, 2, 10));
        assert_eq!((o.calls_counted_by.as_str(), o.span.as_str()), ("server", "run"));
        assert_eq!(per_call(&c, 2, 0, CountedBy::Client, Span::Window), None, "no calls: nothing per call");
    }
}
