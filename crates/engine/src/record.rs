//! One record per call: what the driver measured, flowing to every consumer (stats, progress, exporters).

use serde::Serialize;
use std::time::Duration;

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ErrorKind {
    /// The connection could not be opened (refused, TLS handshake failed, ...).
    Connect,
    /// No answer within the call's timeout.
    Timeout,
    /// An HTTP answer with an unexpected status.
    HttpStatus(u16),
    /// A gRPC answer with a non-OK status code.
    GrpcStatus(i32),
    /// An answer that failed validation (unexpected body, or the workload rejected the request).
    Validation,
    /// The server reset the call's HTTP/2 stream (RST_STREAM) with this error code: it refused or
    /// abandoned that call, the connection went on.
    Reset(u32),
    /// Any other I/O failure on an open connection.
    Io,
    /// The answer broke its protocol (bad framing, a frame or flow-control violation) or went
    /// beyond the engine's limits (`limits`: a body too large to keep, a gzip bomb).
    Protocol,
}

/// The result of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    Ok,
    Error(ErrorKind),
}

impl Outcome {
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }
}

/// Payload bytes of one call: request and answer bodies (gRPC messages without their 5-byte prefix), as
/// sent on the wire (compressed, if they were). Wire bytes are counted per connection, at the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByteCounts {
    pub sent: u64,
    pub received: u64,
}

/// A streaming call's messages (gRPC client, server or bidirectional streaming): how many went
/// each way, and how long after the call started its first answer message was complete. Unary
/// calls and HTTP calls count none: a call is one request and one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StreamCounts {
    pub sent: u32,
    pub received: u32,
    pub first_answer: Option<Duration>,
}

/// Opening a connection, phase by phase (as curl's `-w` time_namelookup, time_connect and
/// time_appconnect): the name lookup when the target is a name looked up per connection, the TCP
/// handshake, then the TLS handshake on a TLS connection; or, over QUIC, the one handshake that is
/// both (`tcp` zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Handshake {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Duration>,
    pub tcp: Duration,
    pub tls: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<Duration>,
}

impl Handshake {
    /// A TCP connection's, TLS or not.
    pub fn tcp(tcp: Duration, tls: Option<Duration>) -> Self {
        Handshake { lookup: None, tcp, tls, quic: None }
    }

    /// This handshake, after a name lookup that took `lookup`.
    pub fn after_lookup(self, lookup: Option<Duration>) -> Self {
        Handshake { lookup, ..self }
    }

    /// A QUIC connection's: transport and TLS 1.3 in one handshake.
    pub fn quic(quic: Duration) -> Self {
        Handshake { lookup: None, tcp: Duration::ZERO, tls: None, quic: Some(quic) }
    }

    /// All of it.
    pub fn total(&self) -> Duration {
        self.lookup.unwrap_or_default() + self.tcp + self.tls.unwrap_or_default() + self.quic.unwrap_or_default()
    }
}

/// A connection opened for a call: all it took (HTTP/2's preface included), and its handshakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Connect {
    pub total: Duration,
    pub handshake: Handshake,
}

/// One call. Times are offsets from the run's start, all read from one monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CallRecord {
    /// The call's number in the run, from 0, in the order the pacer scheduled it.
    pub seq: u64,
    /// When the pacer meant the call to start; equal to `start` in closed loop.
    pub intended: Duration,
    /// When the call actually started (before opening a connection, if it needed one).
    pub start: Duration,
    pub end: Duration,
    /// The connection opened for this call, if it opened one.
    pub connect: Option<Connect>,
    pub outcome: Outcome,
    pub bytes: ByteCounts,
    /// The messages of a streaming call (then the call is the whole stream).
    pub stream: Option<StreamCounts>,
}

impl CallRecord {
    /// Latency from the intended start: corrected for coordinated omission.
    pub fn latency(&self) -> Duration {
        self.end.saturating_sub(self.intended)
    }

    /// Latency from the actual start: what a tool without correction reports.
    pub fn latency_uncorrected(&self) -> Duration {
        self.end.saturating_sub(self.start)
    }

    /// How late the call started compared with its intended time.
    pub fn start_delay(&self) -> Duration {
        self.start.saturating_sub(self.intended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(intended: u64, start: u64, end: u64) -> CallRecord {
        let ms = Duration::from_millis;
        let (intended, start, end) = (ms(intended), ms(start), ms(end));
        let bytes = ByteCounts::default();
        CallRecord { seq: 0, intended, start, end, connect: None, outcome: Outcome::Ok, bytes, stream: None }
    }

    #[test]
    fn corrected_latency_counts_from_the_intended_start() {
        let r = record(10, 15, 18);
        assert_eq!(r.latency(), Duration::from_millis(8));
        assert_eq!(r.latency_uncorrected(), Duration::from_millis(3));
        assert_eq!(r.start_delay(), Duration::from_millis(5));
    }

    #[test]
    fn closed_loop_records_have_equal_latencies() {
        let r = record(10, 10, 12);
        assert_eq!(r.latency(), r.latency_uncorrected());
        assert_eq!(r.start_delay(), Duration::ZERO);
    }

    #[test]
    fn error_kinds_order_for_stable_reports() {
        assert!(ErrorKind::Connect < ErrorKind::HttpStatus(500));
        assert!(ErrorKind::HttpStatus(404) < ErrorKind::HttpStatus(500));
        assert!(!Outcome::Error(ErrorKind::Io).is_ok());
    }
}
