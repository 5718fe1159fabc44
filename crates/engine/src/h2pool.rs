//! HTTP/2 connections shared by concurrency slots: slot `i` uses connection `i % N`, opened on first
//! use and again after it dies; in new-connection-per-call mode every call opens its own.

use crate::net::Endpoint;
use crate::record::ErrorKind;
use crate::target::Connected;
use bytes::Bytes;
use h2::client::SendRequest;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A slot's handle on a connection.
#[derive(Clone)]
pub struct H2Handle {
    pub send: SendRequest<Bytes>,
    alive: Arc<AtomicBool>,
}

pub struct H2Pool {
    pub endpoint: Endpoint,
    fresh_each_call: bool,
    slots: Vec<tokio::sync::Mutex<Option<H2Handle>>>,
}

/// Windows large enough that a 1 MB answer never waits for a WINDOW_UPDATE round trip.
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

impl H2Pool {
    pub fn new(endpoint: Endpoint, connections: usize, fresh_each_call: bool) -> Self {
        let slots = (0..connections.max(1)).map(|_| tokio::sync::Mutex::new(None)).collect();
        H2Pool { endpoint, fresh_each_call, slots }
    }

    pub async fn get(&self, slot: usize) -> Result<Connected<H2Handle>, ErrorKind> {
        if self.fresh_each_call {
            return Ok(Connected::new(self.open().await?));
        }
        let mut shared = self.slots[slot % self.slots.len()].lock().await;
        if let Some(handle) = shared.as_ref().filter(|h| h.alive.load(Ordering::Relaxed)) {
            return Ok(Connected { conn: handle.clone(), opened: false });
        }
        let handle = self.open().await?;
        *shared = Some(handle.clone());
        Ok(Connected::new(handle))
    }

    async fn open(&self) -> Result<H2Handle, ErrorKind> {
        let stream = self.endpoint.connect().await?;
        if self.endpoint.is_tls() && stream.alpn() != Some(b"h2") {
            return Err(ErrorKind::Connect); // the server did not agree to HTTP/2
        }
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .max_frame_size(1 << 20)
            .handshake::<_, Bytes>(stream)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        let alive = Arc::new(AtomicBool::new(true));
        let flag = alive.clone();
        tokio::spawn(async move {
            let _ = connection.await; // ends when the peer closes or every handle is dropped
            flag.store(false, Ordering::Relaxed);
        });
        Ok(H2Handle { send, alive })
    }
}

/// Opens one HTTP/2 connection outside any run (probes, reflection), with the reason if it fails.
pub async fn probe(endpoint: &Endpoint) -> Result<SendRequest<Bytes>, String> {
    let stream = endpoint.connect_uncounted().await?;
    if endpoint.is_tls() && stream.alpn() != Some(b"h2") {
        return Err(format!("{} did not accept HTTP/2 (ALPN h2) over TLS", endpoint.authority()));
    }
    let (send, connection) = h2::client::handshake(stream)
        .await
        .map_err(|e| format!("HTTP/2 handshake with {} failed: {e}", endpoint.authority()))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    send.ready().await.map_err(|e| format!("HTTP/2 connection to {} failed: {e}", endpoint.authority()))
}

/// An answer read whole: head, body data frames, trailers.
pub struct Answer {
    pub head: http::response::Parts,
    pub trailers: Option<http::HeaderMap>,
}

/// Sends `request` with `body` and reads the answer, giving each body chunk to `on_data`.
/// Errors: `Io` when the connection broke (the handle must be dropped), `Protocol` for a stream reset.
pub async fn exchange(
    handle: &H2Handle,
    request: http::Request<()>,
    body: &Bytes,
    mut on_data: impl FnMut(&Bytes),
) -> Result<Answer, h2::Error> {
    let mut send = handle.send.clone().ready().await?;
    let (response, mut stream) = send.send_request(request, body.is_empty())?;
    if !body.is_empty() {
        stream.send_data(body.clone(), true)?;
    }
    let (head, mut recv) = response.await?.into_parts();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk?;
        let _ = recv.flow_control().release_capacity(chunk.len());
        on_data(&chunk);
    }
    let trailers = recv.trailers().await?;
    Ok(Answer { head, trailers })
}

/// Whether an h2 error leaves the connection usable (a reset of one stream does).
pub fn connection_survives(e: &h2::Error) -> bool {
    e.is_reset() && !e.is_go_away() && !e.is_io()
}
