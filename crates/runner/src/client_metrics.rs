//! The one place where what the load engine measured becomes a repetition's figures in
//! results.json: its summary (calls, latency, bytes, the client's CPU) and the client's cores over
//! the run. The server's side (CPU, memory, interference) is added by the repetition.

use callbench_engine::{Percentiles, RunInfo, Summary};
use callbench_results::model::{ColdCalls, Latency, QuicUse, RunMetrics};
use std::time::Duration;

/// The client's figures of one run; `warmup` is the spec's (the engine's CPU counters start there).
pub fn from_summary(s: &Summary, info: &RunInfo, warmup: Duration) -> RunMetrics {
    // The client's CPU counters span the window to the end of the last call, like `wall`.
    let wall = info.elapsed.saturating_sub(warmup).as_secs_f64().max(1e-9);
    RunMetrics {
        calls_ok: s.calls.ok,
        calls_errors: s.calls.errors,
        errors: s.errors.clone(),
        duration_s: s.duration_s,
        throughput_per_s: s.throughput_per_s,
        latency_us: s.latency_us.as_ref().map(latency),
        // Open loop only: in closed loop the two are the same latency.
        latency_uncorrected_us: s.rate.and(s.latency_uncorrected_us.as_ref().map(latency)),
        rate_requested: s.rate.map(|r| r.requested),
        rate_achieved: s.rate.map(|r| r.achieved),
        connections_opened: s.connections_opened,
        goaways: s.goaways,
        retries: s.retries,
        first_failure: s.first_failure.clone(),
        connect_p50_us: s.connect_us.as_ref().map(|c| c.p50 as f64),
        wire_sent_per_call: s.wire_bytes_per_call.sent,
        wire_received_per_call: s.wire_bytes_per_call.received,
        payload_sent_per_call: s.payload_bytes_per_call.sent,
        payload_received_per_call: s.payload_bytes_per_call.received,
        client_cpu_us_per_call: s.client_cpu_us_per_call,
        client_cpu_cores: info.client_cpu.as_secs_f64() / wall,
        cold: s.cold_calls.map(|c| ColdCalls {
            calls: c.calls,
            name_lookup_p50_us: c.name_lookup_us.map(|t| t.p50 as f64),
            tcp_connect_p50_us: c.tcp_connect_us.map(|t| t.p50 as f64),
            tls_handshake_p50_us: c.tls_handshake_us.map(|t| t.p50 as f64),
            quic_handshake_p50_us: c.quic_handshake_us.map(|t| t.p50 as f64),
            rest_p50_us: c.rest_us.p50 as f64,
        }),
        quic: s.quic.map(|q| QuicUse {
            packets_sent: q.packets_sent,
            packets_lost: q.packets_lost,
            congestion_events: q.congestion_events,
        }),
        ..RunMetrics::default()
    }
}

fn latency(p: &Percentiles) -> Latency {
    Latency {
        p50: p.p50 as f64,
        p90: p.p90 as f64,
        p99: p.p99 as f64,
        p99_9: p.p99_9 as f64,
        max: p.max as f64,
        mean: p.mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_engine::{ByteCounts, CallRecord, ErrorKind, Outcome, Sink, Stats, Stop, WireTotals};

    /// A real engine summary of three calls, one failed, turned into results.json's figures.
    #[test]
    fn the_engine_summary_becomes_the_repetitions_figures() {
        let stop = Stop { calls: Some(3), duration: None, warmup: Duration::ZERO };
        let mut stats = Stats::new(stop, Duration::from_millis(1));
        for (i, outcome) in [(0u64, Outcome::Ok), (1, Outcome::Ok), (2, Outcome::Error(ErrorKind::Timeout))] {
            let at = Duration::from_millis(i);
            stats.add(&CallRecord {
                seq: i,
                intended: at,
                start: at,
                end: at + Duration::from_micros(100 * (i + 1)),
                connect: None,
                outcome,
                bytes: ByteCounts { sent: 10, received: 20 },
                stream: None,
            });
        }
        let info = RunInfo {
            elapsed: Duration::from_millis(10),
            window: Duration::from_millis(10),
            requested_calls: None,
            connections_opened: 2,
            callers_never_connected: 0,
            callers_answered: 2,
            callers_connected_by: Some(Duration::from_millis(1)),
            connect_failures: Default::default(),
            goaways: 0,
            retries: 0,
            not_started: 0,
            wire: WireTotals::default(),
            quic: None,
            client_cpu: Duration::from_millis(5),
            cancelled: false,
            first_failure: None,
        };
        let summary = stats.summary(&info);
        let m = from_summary(&summary, &info, Duration::ZERO);
        assert_eq!((m.calls_ok, m.calls_errors, m.connections_opened), (2, 1, 2));
        assert_eq!(m.errors.get("timeout"), Some(&1));
        assert_eq!(m.latency_us.map(|l| l.max), summary.latency_us.map(|p| p.max as f64));
        assert!(m.latency_uncorrected_us.is_none(), "closed loop: one latency");
        assert!((m.client_cpu_cores - 0.5).abs() < 1e-9, "{}", m.client_cpu_cores);
        assert!(
            m.server_cpu_us_per_call.is_none() && m.interference.is_none(),
            "the server's side is not the engine's"
        );
    }
}
