//! HTTP/2 connections shared by concurrency slots: slot `i` uses connection `i % N`, opened on first
//! use and again after it dies; in new-connection-per-call mode every call opens its own. Runs, the
//! probe before a run and reflection all use the engine's own client ([`crate::h2client`]).

use crate::net::failures::ConnectFailure;
use crate::net::Endpoint;
use crate::record::{ErrorKind, Handshake};
use crate::target::Connected;
use crate::EngineError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use crate::h2client::{request_block, Answer, Connection, H2Error, HeaderList, RequestBlocks, Stream};

/// A slot's handle on a connection.
pub type H2Handle = Connection;

pub struct H2Pool {
    pub endpoint: Endpoint,
    fresh_each_call: bool,
    slots: Vec<tokio::sync::Mutex<Option<H2Handle>>>,
    goaways: Arc<AtomicU64>,
}

impl H2Pool {
    pub fn new(endpoint: Endpoint, connections: usize, fresh_each_call: bool) -> Self {
        let slots = (0..connections.max(1)).map(|_| tokio::sync::Mutex::new(None)).collect();
        H2Pool { endpoint, fresh_each_call, slots, goaways: Arc::default() }
    }

    pub async fn get(&self, slot: usize) -> Result<Connected<H2Handle>, ErrorKind> {
        if self.fresh_each_call {
            let (handle, handshake) = self.open().await?;
            return Ok(Connected::new(handle, handshake));
        }
        let mut shared = self.slots[slot % self.slots.len()].lock().await;
        if let Some(handle) = shared.as_ref().filter(|h| h.is_usable()) {
            return Ok(Connected::existing(handle.clone()));
        }
        let (handle, handshake) = self.open().await?;
        *shared = Some(handle.clone());
        Ok(Connected::new(handle, handshake))
    }

    async fn open(&self) -> Result<(H2Handle, Handshake), ErrorKind> {
        let (stream, handshake) = self.endpoint.connect().await?;
        if self.endpoint.is_tls() && stream.alpn() != Some(b"h2") {
            let refusal = format!("{} did not agree to HTTP/2 (ALPN h2) over TLS", self.endpoint.authority());
            return Err(self.endpoint.count_failure(ConnectFailure::Handshake(refusal)));
        }
        Ok((Connection::start_counted(stream, self.goaways.clone()), handshake))
    }

    /// Connections the server ended with GOAWAY so far.
    pub fn goaways(&self) -> u64 {
        self.goaways.load(Ordering::Relaxed)
    }
}

/// Opens one HTTP/2 connection outside any run (probes, reflection) and waits up to `wait` for the
/// server's SETTINGS. A peer that closes or answers with something other than HTTP/2 is an error
/// with the reason; one that stays silent past `wait` is not: the run's calls then time out and
/// are counted as such. A server that refuses HTTP/2 by ALPN is an [`EngineError::Target`], one
/// that answers with something else an [`EngineError::Protocol`].
pub async fn probe(endpoint: &Endpoint, wait: Duration) -> Result<Connection, EngineError> {
    let (stream, _) = endpoint.connect_uncounted().await?;
    if endpoint.is_tls() && stream.alpn() != Some(b"h2") {
        return Err(EngineError::Target(format!("{} did not accept HTTP/2 (ALPN h2) over TLS", endpoint.authority())));
    }
    let connection = Connection::start(stream);
    match tokio::time::timeout(wait, connection.settled()).await {
        Ok(Err(e)) => {
            let how = if endpoint.is_tls() { "TLS" } else { "plaintext (h2c, prior knowledge)" };
            Err(EngineError::Protocol(format!(
                "HTTP/2 handshake with {} failed: {e}: is it an HTTP/2 server, over {how}?",
                endpoint.authority()
            )))
        }
        Ok(Ok(())) | Err(_) => Ok(connection),
    }
}
