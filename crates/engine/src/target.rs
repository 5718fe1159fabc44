//! What the driver calls. Each protocol (HTTP/1.1, HTTP/2, gRPC, in-process) is one implementation.

use crate::record::{ByteCounts, ErrorKind, Outcome};
use std::future::Future;

/// What one call on an open connection gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub outcome: Outcome,
    pub bytes: ByteCounts,
    /// False when the connection cannot be used again (closed by the peer, broken framing): the driver
    /// opens a new one before the slot's next call.
    pub keep_connection: bool,
}

impl Reply {
    pub fn ok(bytes: ByteCounts) -> Self {
        Reply { outcome: Outcome::Ok, bytes, keep_connection: true }
    }

    pub fn error(kind: ErrorKind, bytes: ByteCounts) -> Self {
        Reply { outcome: Outcome::Error(kind), bytes, keep_connection: true }
    }
}

/// A thing to load. Shared by every worker of a run; each concurrency slot owns one `Conn`.
pub trait Target: Send + Sync + 'static {
    /// A connection (or, for multiplexed protocols, a handle on a shared one).
    type Conn: Send + 'static;

    /// Opens the connection of concurrency slot `slot` (0-based). A target with fewer connections than
    /// slots (HTTP/2 streams) can hand slot `i` a handle on connection `i % connections`.
    fn connect(&self, slot: usize) -> impl Future<Output = Result<Self::Conn, ErrorKind>> + Send;

    /// Makes one call.
    fn call(&self, conn: &mut Self::Conn) -> impl Future<Output = Reply> + Send;
}
