//! Records aggregated into mergeable HDR histograms (µs) and counters; a `Summary` is plain data in the
//! shape of callbench's JSON output.

use crate::driver::RunInfo;
use crate::histograms::{histogram, micros};
pub use crate::histograms::{percentiles, PerCall, Percentiles};
use crate::net::failures::ConnectFailures;
use crate::record::{CallRecord, Connect, ErrorKind, Outcome};
use crate::sink::Sink;
use crate::stop::Stop;
use crate::stream_stats::{StreamStats, StreamSummary};
use crate::target::QuicCounts;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How much longer than planned the calls of a kept rate may take: their own latency at the end
/// (a 1 s run of 100 ms calls takes 1.1 s), beyond which they were waiting for the server.
pub const KEPT_OVERTIME: f64 = 0.1;

#[derive(Debug, Clone)]
pub struct Stats {
    stop: Stop,
    late_after: Duration,
    /// From the intended start (coordinated-omission corrected).
    pub latency_us: Histogram<u64>,
    /// From the actual start.
    pub latency_uncorrected_us: Histogram<u64>,
    /// Time to open a connection, for calls that opened one (warm-up included: connections are
    /// mostly opened then).
    pub connect_us: Histogram<u64>,
    /// Measured calls that opened their connection, phase by phase.
    pub cold: ColdPhases,
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub late_starts: u64,
    /// The latest intended and actual starts of measured calls: how far the starts fell behind
    /// the schedule by its end.
    pub last_intended: Duration,
    pub last_start: Duration,
    /// When the last measured call ended: the window the calls really took ends there when it is
    /// later than the planned one (a server that could not keep the rate).
    pub last_end: Duration,
    pub payload_sent: u64,
    pub payload_received: u64,
    pub streams: StreamStats,
}

/// The calls that opened their own connection, split as curl's `-w` splits a transfer: the name
/// lookup when there is one (time_namelookup), the TCP handshake (time_connect), the TLS handshake (time_appconnect − time_connect), and the rest up to
/// the answer's end (HTTP/2's preface, the request and its answer). Over QUIC the handshake is one
/// phase, transport and TLS together.
#[derive(Debug, Clone)]
pub struct ColdPhases {
    pub lookup_us: Histogram<u64>,
    pub tcp_us: Histogram<u64>,
    pub tls_us: Histogram<u64>,
    pub quic_us: Histogram<u64>,
    pub rest_us: Histogram<u64>,
}

impl ColdPhases {
    fn new() -> Self {
        ColdPhases {
            lookup_us: histogram(),
            tcp_us: histogram(),
            tls_us: histogram(),
            quic_us: histogram(),
            rest_us: histogram(),
        }
    }

    fn add(&mut self, r: &CallRecord, connect: Connect) {
        let handshake = connect.handshake;
        if let Some(lookup) = handshake.lookup {
            self.lookup_us.saturating_record(micros(lookup));
        }
        match (handshake.quic, handshake.tls) {
            (Some(quic), _) => self.quic_us.saturating_record(micros(quic)),
            (None, tls) => {
                self.tcp_us.saturating_record(micros(handshake.tcp));
                if let Some(tls) = tls {
                    self.tls_us.saturating_record(micros(tls));
                }
            }
        }
        self.rest_us.saturating_record(micros(r.latency_uncorrected().saturating_sub(handshake.total())));
    }

    fn merge(&mut self, other: &ColdPhases) {
        self.lookup_us.add(&other.lookup_us).expect("same bounds");
        self.tcp_us.add(&other.tcp_us).expect("same bounds");
        self.tls_us.add(&other.tls_us).expect("same bounds");
        self.quic_us.add(&other.quic_us).expect("same bounds");
        self.rest_us.add(&other.rest_us).expect("same bounds");
    }

    fn summary(&self) -> Option<ColdSummary> {
        Some(ColdSummary {
            calls: self.rest_us.len(),
            name_lookup_us: percentiles(&self.lookup_us),
            tcp_connect_us: percentiles(&self.tcp_us),
            tls_handshake_us: percentiles(&self.tls_us),
            quic_handshake_us: percentiles(&self.quic_us),
            rest_us: percentiles(&self.rest_us)?,
        })
    }
}

/// [`ColdPhases`] as percentiles (µs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ColdSummary {
    /// Measured calls that opened a connection.
    pub calls: u64,
    /// Targets named by a name looked up per connection only (`getaddrinfo`, as curl's time_namelookup).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_lookup_us: Option<Percentiles>,
    /// TCP connections only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_connect_us: Option<Percentiles>,
    pub tls_handshake_us: Option<Percentiles>,
    /// QUIC connections only: transport and TLS 1.3 in one handshake (near zero with 0-RTT,
    /// whose request goes before the handshake ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic_handshake_us: Option<Percentiles>,
    /// From the end of the handshakes to the end of the answer.
    pub rest_us: Percentiles,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calls {
    pub ok: u64,
    pub errors: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub requested: f64,
    pub achieved: f64,
    /// Calls that started more than the late threshold after their intended time.
    pub late_starts: u64,
    /// Calls the schedule intended in the window that could not start by its planned end (see
    /// [`crate::driver::START_GRACE`]): not made, so their latency is in no figure.
    pub not_started: u64,
    /// Whether the server took the load asked for (see [`Stats::rate_kept`]).
    pub kept: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub calls: Calls,
    /// Failed calls by kind: `connect`, `timeout`, `io`, `protocol`, `validation`, `http_503`, `grpc_14`...
    pub errors: BTreeMap<String, u64>,
    pub duration_s: f64,
    pub throughput_per_s: f64,
    pub latency_us: Option<Percentiles>,
    pub latency_uncorrected_us: Option<Percentiles>,
    pub connect_us: Option<Percentiles>,
    /// Measured calls that opened their connection, phase by phase.
    pub cold_calls: Option<ColdSummary>,
    pub connections_opened: u64,
    /// Callers that tried to connect and never had a connection: the run did not hold the
    /// concurrency it was asked for.
    pub callers_never_connected: u64,
    /// Callers that had a call answered successfully (warm-up included): with as many callers as
    /// connections (HTTP/1.1), every connection that carried an answered call.
    pub callers_answered: u64,
    /// When the last caller that got a connection had its first, from the run's start (s): how
    /// long opening the run's connections took.
    pub callers_connected_s: Option<f64>,
    /// Why connections failed to open, by reason (whole run, warm-up included).
    pub connect_failures: ConnectFailures,
    /// Connections the server ended gracefully (HTTP/2 GOAWAY): not errors.
    pub goaways: u64,
    /// What the server said of the first call that failed with words (`grpc_5: no such user`;
    /// whole run, warm-up included); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
    /// Calls sent again because the server had not processed them (above a GOAWAY's
    /// last-stream-id, or refused): each call is counted once, its latency from its first intended start.
    pub retries: u64,
    /// The planned measured window (`duration_s` is what the calls really took, when longer).
    pub planned_s: f64,
    pub wire_bytes_per_call: PerCall,
    pub payload_bytes_per_call: PerCall,
    /// HTTP/3 only: the client's QUIC loss recovery over the window (its own packets: requests
    /// and acknowledgements; the server's are the server's to count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicCounts>,
    pub client_cpu_us_per_call: f64,
    /// The peak resident memory of the process that ran the load (VmHWM) when this summary was
    /// made: what the answers made it hold.
    pub client_rss_peak_kib: Option<u64>,
    /// Open loop only.
    pub rate: Option<Rate>,
    /// Streaming calls only: their messages (`latency_us` is then a whole stream's time).
    pub stream: Option<StreamSummary>,
}

/// A stable, machine-friendly name for an error kind.
pub fn error_name(kind: ErrorKind) -> String {
    match kind {
        ErrorKind::Connect => "connect".into(),
        ErrorKind::Timeout => "timeout".into(),
        ErrorKind::HttpStatus(code) => format!("http_{code}"),
        ErrorKind::GrpcStatus(code) => format!("grpc_{code}"),
        ErrorKind::Validation => "validation".into(),
        ErrorKind::Reset(code) => format!("reset_{code}"),
        ErrorKind::Io => "io".into(),
        ErrorKind::Protocol => "protocol".into(),
    }
}

impl Stats {
    /// Records intended before `stop.warmup` are left out; a start more than `late_after` after its
    /// intended time counts as late.
    pub fn new(stop: Stop, late_after: Duration) -> Self {
        Stats {
            stop,
            late_after,
            latency_us: histogram(),
            latency_uncorrected_us: histogram(),
            connect_us: histogram(),
            cold: ColdPhases::new(),
            ok: 0,
            errors: BTreeMap::new(),
            late_starts: 0,
            last_intended: Duration::ZERO,
            last_start: Duration::ZERO,
            last_end: Duration::ZERO,
            payload_sent: 0,
            payload_received: 0,
            streams: StreamStats::default(),
        }
    }

    pub fn calls(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    /// Calls started per second over the window [`from`, `to`) their intended starts fall in. A
    /// client that falls behind starts them over a longer time: until its last start, when that is
    /// later than the window's end. (Calls left not started at a planned end are not in `calls`.)
    pub fn achieved_rate(&self, from: Duration, to: Duration) -> f64 {
        let span = to.max(self.last_start).saturating_sub(from).as_secs_f64();
        if span > 0.0 {
            self.calls() as f64 / span
        } else {
            0.0
        }
    }

    /// Whether an open-loop run kept its rate: every call it intended started, and the calls took
    /// at most [`KEPT_OVERTIME`] longer than the schedule spread them over (from the window's start
    /// to the last intended start, plus one gap) — else calls piled up in flight. Judged on the
    /// calls actually scheduled, so Poisson arrivals' chance counts do not trip it.
    pub fn rate_kept(&self, not_started: u64, taken: f64) -> bool {
        let calls = self.calls();
        if not_started > 0 {
            return false;
        }
        if calls < 2 {
            return true;
        }
        let spread = self.last_intended.saturating_sub(self.stop.warmup).as_secs_f64();
        let planned = spread * calls as f64 / (calls - 1) as f64;
        taken <= planned * (1.0 + KEPT_OVERTIME)
    }

    pub fn summary(&self, run: &RunInfo) -> Summary {
        let calls = self.calls();
        let per_call = |n: f64| if calls == 0 { 0.0 } else { n / calls as f64 };
        let secs = run.window.as_secs_f64();
        let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        // Delivered, not scheduled: the calls of the window over the time they really took,
        // from the window's start to the end of the last one.
        let taken = (self.last_end.saturating_sub(self.stop.warmup).as_secs_f64()).max(secs);
        Summary {
            calls: Calls { ok: self.ok, errors: calls - self.ok },
            errors: self.errors.iter().map(|(k, n)| (error_name(*k), *n)).collect(),
            duration_s: taken,
            throughput_per_s: if taken > 0.0 { self.ok as f64 / taken } else { 0.0 },
            planned_s: secs,
            goaways: run.goaways,
            first_failure: run.first_failure.clone(),
            retries: run.retries,
            latency_us: percentiles(&self.latency_us),
            latency_uncorrected_us: percentiles(&self.latency_uncorrected_us),
            connect_us: percentiles(&self.connect_us),
            cold_calls: self.cold.summary(),
            connections_opened: run.connections_opened,
            callers_never_connected: run.callers_never_connected,
            callers_answered: run.callers_answered,
            callers_connected_s: run.callers_connected_by.map(|d| d.as_secs_f64()),
            connect_failures: run.connect_failures.clone(),
            wire_bytes_per_call: PerCall {
                sent: per_call(run.wire.sent as f64),
                received: per_call(run.wire.received as f64),
            },
            payload_bytes_per_call: PerCall {
                sent: per_call(self.payload_sent as f64),
                received: per_call(self.payload_received as f64),
            },
            quic: run.quic,
            client_cpu_us_per_call: per_call(run.client_cpu.as_secs_f64() * 1e6),
            client_rss_peak_kib: crate::memory::peak_rss_kib(),
            rate: run.requested_calls.map(|requested| Rate {
                requested: per_s(requested),
                achieved: self.achieved_rate(self.stop.warmup, self.stop.warmup + run.window),
                late_starts: self.late_starts,
                not_started: run.not_started,
                kept: self.rate_kept(run.not_started, taken),
            }),
            stream: self.streams.summary(taken, (self.payload_sent, self.payload_received)),
        }
    }
}

impl Sink for Stats {
    fn add(&mut self, r: &CallRecord) {
        if let Some(connect) = r.connect {
            self.connect_us.saturating_record(micros(connect.total));
        }
        if self.stop.in_warmup(r.intended) {
            return;
        }
        if let Some(connect) = r.connect.filter(|_| r.outcome.is_ok()) {
            self.cold.add(r, connect);
        }
        self.latency_us.saturating_record(micros(r.latency()));
        self.latency_uncorrected_us.saturating_record(micros(r.latency_uncorrected()));
        match r.outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Error(kind) => *self.errors.entry(kind).or_default() += 1,
        }
        self.late_starts += u64::from(r.start_delay() > self.late_after);
        self.last_intended = self.last_intended.max(r.intended);
        self.last_start = self.last_start.max(r.start);
        self.last_end = self.last_end.max(r.end);
        self.payload_sent += r.bytes.sent;
        self.payload_received += r.bytes.received;
        self.streams.add(r);
    }

    /// Adds another aggregate (another worker, process or repetition) into this one.
    fn merge(&mut self, other: Stats) {
        self.latency_us.add(&other.latency_us).expect("same bounds");
        self.latency_uncorrected_us.add(&other.latency_uncorrected_us).expect("same bounds");
        self.connect_us.add(&other.connect_us).expect("same bounds");
        self.cold.merge(&other.cold);
        self.ok += other.ok;
        for (kind, n) in other.errors {
            *self.errors.entry(kind).or_default() += n;
        }
        self.late_starts += other.late_starts;
        self.last_intended = self.last_intended.max(other.last_intended);
        self.last_start = self.last_start.max(other.last_start);
        self.last_end = self.last_end.max(other.last_end);
        self.payload_sent += other.payload_sent;
        self.payload_received += other.payload_received;
        self.streams.merge(&other.streams);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ByteCounts, Handshake};
    use crate::target::WireTotals;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn record(intended: u64, start: u64, end: u64, outcome: Outcome) -> CallRecord {
        let bytes = ByteCounts { sent: 10, received: 30 };
        CallRecord {
            seq: 0,
            intended: MS(intended),
            start: MS(start),
            end: MS(end),
            connect: None,
            outcome,
            bytes,
            stream: None,
        }
    }

    fn info(window: u64, requested: Option<f64>) -> RunInfo {
        RunInfo {
            elapsed: MS(window),
            window: MS(window),
            requested_calls: requested,
            connections_opened: 1,
            callers_never_connected: 0,
            callers_answered: 1,
            callers_connected_by: Some(MS(1)),
            connect_failures: ConnectFailures::default(),
            goaways: 0,
            retries: 0,
            not_started: 0,
            wire: WireTotals { sent: 10_100, received: 30_300 },
            quic: None,
            client_cpu: MS(101),
            cancelled: false,
            first_failure: None,
        }
    }

    #[test]
    fn percentiles_throughput_and_bytes() {
        let mut s = Stats::new(Stop::after_calls(100), MS(1));
        for i in 0..100 {
            s.add(&record(i * 10, i * 10, i * 10 + 1 + i % 10, Outcome::Ok));
        }
        s.add(&record(0, 0, 5, Outcome::Error(ErrorKind::HttpStatus(503))));
        let sum = s.summary(&info(1000, None));
        assert_eq!((sum.calls.ok, sum.calls.errors), (100, 1));
        assert_eq!(sum.errors["http_503"], 1);
        assert_eq!(sum.throughput_per_s, 100.0);
        let latency = sum.latency_us.unwrap();
        assert_eq!(latency.max, s.latency_us.highest_equivalent(10_000));
        assert!((5_000..=5_010).contains(&latency.p50), "{latency:?}");
        assert_eq!(sum.wire_bytes_per_call, PerCall { sent: 100.0, received: 300.0 });
        assert_eq!(sum.payload_bytes_per_call, PerCall { sent: 10.0, received: 30.0 });
        assert_eq!(sum.client_cpu_us_per_call, 1000.0);
        assert_eq!(sum.rate, None);
        assert_eq!(sum.connect_us, None);
    }

    #[test]
    fn warmup_excluded_late_starts_and_rates() {
        let mut s = Stats::new(Stop::after(MS(1000)).with_warmup(MS(100)), MS(1));
        let mut warm = record(50, 50, 60, Outcome::Ok);
        warm.connect = Some(Connect { total: MS(3), handshake: Handshake::tcp(MS(2), None) });
        s.add(&warm);
        s.add(&record(100, 100, 101, Outcome::Ok));
        s.add(&record(200, 205, 206, Outcome::Ok)); // 5 ms late
        s.add(&record(900, 900, 901, Outcome::Ok));
        let sum = s.summary(&info(1000, Some(4.0)));
        assert_eq!(sum.calls.ok, 3);
        let kept = Rate { requested: 4.0, achieved: 3.0, late_starts: 1, not_started: 0, kept: true };
        assert_eq!(sum.rate, Some(kept));
        // Had the last call started at 1.2 s, the 4 starts took 1.1 s from the window's start.
        s.add(&record(950, 1200, 1201, Outcome::Ok));
        assert_eq!(s.summary(&info(1000, Some(4.0))).rate.unwrap().achieved, 4.0 / 1.1);
        assert_eq!(sum.latency_us.unwrap().max, s.latency_us.highest_equivalent(6_000));
        assert!(sum.latency_uncorrected_us.unwrap().max < 1_001);
        assert_eq!(sum.connect_us.unwrap().max, s.connect_us.highest_equivalent(3_000));
        assert_eq!(sum.cold_calls, None, "a warm-up call's connection is no measured call's phase");
    }

    #[test]
    fn cold_calls_split_into_handshakes_and_the_rest() {
        let mut s = Stats::new(Stop::after_calls(10), MS(1));
        let handshake = |tls| Handshake::tcp(MS(10), tls);
        for (tls, end) in [(Some(MS(20)), 40), (Some(MS(22)), 42)] {
            let mut r = record(0, 0, end, Outcome::Ok);
            r.connect = Some(Connect { total: MS(32), handshake: handshake(tls) });
            s.add(&r);
        }
        s.add(&record(0, 0, 5, Outcome::Ok)); // a call on a kept connection: not cold
        let cold = s.summary(&info(100, None)).cold_calls.unwrap();
        assert_eq!(cold.calls, 2);
        assert_eq!(cold.tcp_connect_us.unwrap().p50, s.cold.tcp_us.highest_equivalent(10_000));
        assert_eq!(cold.quic_handshake_us, None);
        assert_eq!(cold.tls_handshake_us.unwrap().max, s.cold.tls_us.highest_equivalent(22_000));
        assert_eq!(cold.rest_us.max, s.cold.rest_us.highest_equivalent(10_000), "40 - 10 - 20 and 42 - 10 - 22");
        let mut plain = Stats::new(Stop::after_calls(10), MS(1));
        let mut r = record(0, 0, 15, Outcome::Ok);
        r.connect = Some(Connect { total: MS(10), handshake: handshake(None) });
        plain.add(&r);
        let cold = plain.summary(&info(100, None)).cold_calls.unwrap();
        assert_eq!((cold.tls_handshake_us, cold.rest_us.max), (None, plain.cold.rest_us.highest_equivalent(5_000)));
    }

    #[test]
    fn a_quic_cold_call_has_one_handshake_and_no_tcp_connect() {
        let mut s = Stats::new(Stop::after_calls(10), MS(1));
        let mut r = record(0, 0, 80, Outcome::Ok);
        r.connect = Some(Connect { total: MS(41), handshake: Handshake::quic(MS(40)) });
        s.add(&r);
        let cold = s.summary(&info(100, None)).cold_calls.unwrap();
        assert_eq!((cold.calls, cold.tcp_connect_us, cold.tls_handshake_us), (1, None, None));
        assert_eq!(cold.quic_handshake_us.unwrap().p50, s.cold.quic_us.highest_equivalent(40_000));
        assert_eq!(cold.rest_us.p50, s.cold.rest_us.highest_equivalent(40_000), "80 - 40");
        let json = serde_json::to_value(cold).unwrap();
        assert!(json.get("tcp_connect_us").is_none() && json.get("quic_handshake_us").is_some(), "{json}");
    }

    #[test]
    fn a_rate_is_kept_unless_calls_were_left_unstarted_or_piled_up() {
        // 10 calls planned 10 ms apart in a 100 ms window, each answered after `latency(i)`.
        let run = |latency: fn(u64) -> u64, not_started: u64| {
            let mut s = Stats::new(Stop::after(MS(100)), MS(1));
            for i in 0..10 {
                s.add(&record(i * 10, i * 10, i * 10 + latency(i), Outcome::Ok));
            }
            s.summary(&RunInfo { not_started, ..info(100, Some(10.0)) })
        };
        let steady = run(|_| 19, 0); // the last call ends at 109 ms: its own latency
        assert!(steady.rate.unwrap().kept, "{steady:?}");
        assert!((steady.duration_s - 0.109).abs() < 1e-9 && steady.planned_s == 0.1);
        let piled = run(|i| 50 + 40 * i, 0); // each waits for the one before: done at 500 ms
        assert!(!piled.rate.unwrap().kept, "{piled:?}");
        assert!((piled.throughput_per_s - 20.0).abs() < 1e-9, "10 calls over 0.5 s: {piled:?}");
        let unstarted = run(|_| 1, 3);
        assert_eq!(unstarted.rate.map(|r| (r.kept, r.not_started)), Some((false, 3)));
    }

    #[test]
    fn merging_equals_adding_everything_to_one() {
        let stop = Stop::after_calls(10);
        let (mut a, mut b, mut all) = (Stats::new(stop, MS(1)), Stats::new(stop, MS(1)), Stats::new(stop, MS(1)));
        for i in 0..10 {
            let r = record(0, 0, i, if i == 3 { Outcome::Error(ErrorKind::Io) } else { Outcome::Ok });
            if i % 2 == 0 { &mut a } else { &mut b }.add(&r);
            all.add(&r);
        }
        a.merge(b);
        let (mut merged, mut whole) = (a.summary(&info(10, None)), all.summary(&info(10, None)));
        // The process's peak memory is read as each summary is made, and the tests running beside
        // this one raise it in between (those moving megabytes): not what is compared.
        (merged.client_rss_peak_kib, whole.client_rss_peak_kib) = (None, None);
        assert_eq!(merged, whole);
    }

    #[test]
    fn no_calls_no_percentiles() {
        let sum = Stats::new(Stop::after_calls(1), MS(1)).summary(&info(10, None));
        assert_eq!((sum.latency_us, sum.calls.ok, sum.client_cpu_us_per_call), (None, 0, 0.0));
    }
}
