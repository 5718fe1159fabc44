//! What the driver calls. Each protocol (HTTP/1.1, HTTP/2, gRPC, in-process) is one implementation.

use crate::net::failures::ConnectFailures;
use crate::record::{ByteCounts, ErrorKind, Handshake, Outcome};
use std::future::Future;
use std::time::Instant;

/// What one call on an open connection gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub outcome: Outcome,
    /// Payload bytes of the call (wire bytes are counted per connection, see [`Target::wire`]).
    pub bytes: ByteCounts,
    /// False when the connection cannot be used again (closed by the peer, broken framing): the driver
    /// opens a new one before the slot's next call.
    pub keep_connection: bool,
    /// The server did not process the call (HTTP/2: a stream above GOAWAY's last-stream-id, or
    /// REFUSED_STREAM): the driver sends it again, on a new connection if this one is gone.
    pub unprocessed: bool,
    /// A streaming call's messages, and when its first answer message was complete.
    pub stream: Option<Streamed>,
}

/// What a streaming call sent and received, message by message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    pub sent: u32,
    pub received: u32,
    pub first_answer: Option<Instant>,
}

impl Reply {
    pub fn ok(bytes: ByteCounts) -> Self {
        Reply { outcome: Outcome::Ok, bytes, keep_connection: true, unprocessed: false, stream: None }
    }

    pub fn error(kind: ErrorKind, bytes: ByteCounts) -> Self {
        Reply { outcome: Outcome::Error(kind), bytes, keep_connection: true, unprocessed: false, stream: None }
    }

    /// A failure after which the connection must not be reused.
    pub fn broken(kind: ErrorKind, bytes: ByteCounts) -> Self {
        Reply { outcome: Outcome::Error(kind), bytes, keep_connection: false, unprocessed: false, stream: None }
    }

    /// This reply, for a streaming call that sent and received `stream`'s messages.
    pub fn streamed(self, stream: Streamed) -> Self {
        Reply { stream: Some(stream), ..self }
    }

    /// A call the server never processed: to be sent again.
    pub fn unprocessed(bytes: ByteCounts, keep_connection: bool) -> Self {
        Reply { outcome: Outcome::Error(ErrorKind::Io), bytes, keep_connection, unprocessed: true, stream: None }
    }
}

/// A slot's connection, and the handshakes if getting it opened one (a handle on an already open
/// HTTP/2 connection opens none).
pub struct Connected<C> {
    pub conn: C,
    pub opened: Option<Handshake>,
}

impl<C> Connected<C> {
    /// A connection opened now.
    pub fn new(conn: C, handshake: Handshake) -> Self {
        Connected { conn, opened: Some(handshake) }
    }

    /// A connection (or handle) that was already open.
    pub fn existing(conn: C) -> Self {
        Connected { conn, opened: None }
    }
}

/// What a QUIC client's own loss recovery counted on its connections (RFC 9002): the packets it
/// sent, those it declared lost, and the times it cut its congestion window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct QuicCounts {
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub congestion_events: u64,
}

impl QuicCounts {
    pub fn since(self, earlier: QuicCounts) -> QuicCounts {
        QuicCounts {
            packets_sent: self.packets_sent.saturating_sub(earlier.packets_sent),
            packets_lost: self.packets_lost.saturating_sub(earlier.packets_lost),
            congestion_events: self.congestion_events.saturating_sub(earlier.congestion_events),
        }
    }

    pub fn plus(self, other: QuicCounts) -> QuicCounts {
        QuicCounts {
            packets_sent: self.packets_sent + other.packets_sent,
            packets_lost: self.packets_lost + other.packets_lost,
            congestion_events: self.congestion_events + other.congestion_events,
        }
    }
}

/// Bytes counted at the sockets of every connection of a target, TLS and framing included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireTotals {
    pub sent: u64,
    pub received: u64,
}

impl WireTotals {
    pub fn since(self, earlier: WireTotals) -> WireTotals {
        WireTotals { sent: self.sent - earlier.sent, received: self.received - earlier.received }
    }
}

/// A thing to load. Shared by every worker of a run; each concurrency slot owns one `Conn`.
pub trait Target: Send + Sync + 'static {
    /// A connection (or, for multiplexed protocols, a handle on a shared one).
    type Conn: Send + 'static;

    /// Gives concurrency slot `slot` (0-based) a connection. A target with fewer connections than
    /// slots (HTTP/2 streams) hands slot `i` a handle on connection `i % connections`.
    fn connect(&self, slot: usize) -> impl Future<Output = Result<Connected<Self::Conn>, ErrorKind>> + Send;

    /// Makes one call.
    fn call(&self, conn: &mut Self::Conn) -> impl Future<Output = Reply> + Send;

    /// Whether a slot's connection can take its next call: false once the server has closed it
    /// since (an idle HTTP/1.1 keep-alive connection, an HTTP/2 connection after GOAWAY), so the
    /// driver opens another instead of sending a call the server will never see. Checked before
    /// every call on a kept connection: it must not block, and should cost no system call.
    fn reusable(&self, _conn: &mut Self::Conn) -> bool {
        true
    }

    /// Whether a call's request depends on its turn (requests in turn, or made per call): the
    /// driver then tells each call its [`crate::call_data::Turn`].
    fn varies(&self) -> bool {
        false
    }

    /// Bytes on the wire so far, all connections together (0 for targets without a wire).
    fn wire(&self) -> WireTotals {
        WireTotals::default()
    }

    /// QUIC targets: their loss recovery's counts so far, all connections together.
    fn quic(&self) -> Option<QuicCounts> {
        None
    }

    /// Why connections failed to open so far, all connections together.
    fn connect_failures(&self) -> ConnectFailures {
        ConnectFailures::default()
    }

    /// Connections the server ended gracefully so far (HTTP/2 GOAWAY).
    fn goaways(&self) -> u64 {
        0
    }

    /// What the server said of the first call that failed with words (a gRPC status's
    /// grpc-message: `grpc_5: no such user`), if one did.
    fn first_failure(&self) -> Option<String> {
        None
    }
}
