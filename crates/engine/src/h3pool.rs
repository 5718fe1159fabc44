//! HTTP/3 connections over QUIC (quinn, h3), shared by concurrency slots as HTTP/2's are: slot `i`
//! uses connection `i % N`, opened on first use and again after it dies; in new-connection-per-call
//! mode every call opens its own. All connections go through one UDP socket (one quinn endpoint).
//!
//! QUIC carries TLS 1.3 inside its own handshake, so a connection's handshake is one phase
//! ([`Handshake::quic`]): one round trip, or none before the request with 0-RTT.
//!
//! What a server can make a connection hold is bounded: quinn's windows are finite (HTTP/2's
//! numbers), the server may open no request streams and send no datagrams, and every received
//! stream's frames are checked as they arrive ([`crate::h3bounds`]; what that costs:
//! bench/results/http3-bounds-cost-2026-12-06.md).

use crate::net::failures::{ConnectFailure, ConnectFailures, FailureTally};
use crate::record::{ErrorKind, Handshake};
use crate::target::{Connected, QuicCounts, WireTotals};
use crate::EngineError;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A slot's handle on a connection: h3's request sender and the QUIC connection under it.
#[derive(Clone)]
pub struct H3Handle {
    pub send: h3::client::SendRequest<crate::h3bounds::OpenStreams, Bytes>,
    pub quic: quinn::Connection,
    /// Set once the server sent GOAWAY, or refused the 0-RTT the connection began with: no new
    /// request goes on it, the pool opens another.
    draining: Arc<AtomicBool>,
    /// With 0-RTT: whether the server accepted it, once the handshake says (None before).
    early: Option<tokio::sync::watch::Receiver<Option<bool>>>,
    /// Dropped with the last handle: the cold connection's cue to wait for its ticket, then close.
    _released: Option<Arc<tokio::sync::oneshot::Sender<()>>>,
}

impl H3Handle {
    /// False once the connection is closed (by either side, idle timeout included) or draining.
    pub fn is_usable(&self) -> bool {
        self.quic.close_reason().is_none() && !self.draining.load(Ordering::Relaxed)
    }

    /// Whether the server refused the 0-RTT this connection began with, so that nothing sent
    /// early was processed: waits for the handshake's word on a connection opened with 0-RTT.
    pub async fn early_data_rejected(&self) -> bool {
        let Some(mut verdict) = self.early.clone() else { return false };
        matches!(verdict.wait_for(Option::is_some).await.map(|v| *v), Ok(Some(false)))
    }
}

/// How the pool's connections open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct H3Options {
    /// Send the request in the first flight (0-RTT) when a session ticket from an earlier
    /// connection allows it; the ticket needs TLS resumption on.
    pub zero_rtt: bool,
}

pub struct H3Pool {
    addrs: Vec<SocketAddr>,
    /// When set, the host is looked up again for each connection, its addresses checked by this rule.
    lookup: Option<crate::net::Allowed>,
    /// The `:authority` host, and the TLS server name unless `server_name` is set.
    pub host: String,
    /// The TLS server name sent (SNI) and checked in the certificate, when not the host.
    server_name: Option<String>,
    client: QuicClient,
    /// Made on first use, on the runtime that runs the calls (quinn's driver task lives there).
    endpoint: OnceLock<Result<quinn::Endpoint, String>>,
    fresh_each_call: bool,
    connect_timeout: Option<Duration>,
    slots: Vec<tokio::sync::Mutex<Option<H3Handle>>>,
    wire: Mutex<WireBook>,
    failures: FailureTally,
    /// The server refused the last 0-RTT: the next connection makes a full handshake (and gets
    /// tickets of the server's now), as the call sent again on it must not be refused twice.
    early_refused: Arc<AtomicBool>,
}

/// Bytes and loss-recovery counts of the closed connections, and the open ones to ask.
#[derive(Default)]
struct WireBook {
    closed: (WireTotals, QuicCounts),
    open: Vec<quinn::Connection>,
}

impl WireBook {
    fn fold_closed(&mut self) {
        let mut closed = self.closed;
        self.open.retain(|c| {
            let open = c.close_reason().is_none();
            if !open {
                closed = add(closed, c);
            }
            open
        });
        self.closed = closed;
    }

    fn totals(&self) -> (WireTotals, QuicCounts) {
        self.open.iter().fold(self.closed, add)
    }
}

fn add((wire, quic): (WireTotals, QuicCounts), connection: &quinn::Connection) -> (WireTotals, QuicCounts) {
    let stats = connection.stats();
    let path = stats.path;
    let counted = QuicCounts {
        packets_sent: path.sent_packets,
        packets_lost: path.lost_packets,
        congestion_events: path.congestion_events,
    };
    (
        WireTotals { sent: wire.sent + stats.udp_tx.bytes, received: wire.received + stats.udp_rx.bytes },
        quic.plus(counted),
    )
}

/// How long, at most, a cold connection with 0-RTT stays open after its call for the server's
/// session ticket. With 0-RTT the answer comes before the server has seen the client's Finished,
/// and the server sends its tickets after that: a connection closed at the answer leaves none, and
/// every other cold call would pay a full handshake. Two round trips after the call it has come.
const TICKET_WAIT: Duration = Duration::from_secs(1);

/// A QUIC client's settings, shared by the pools of a target (its session tickets too).
#[derive(Clone)]
pub struct QuicClient {
    config: quinn::ClientConfig,
    options: H3Options,
}

impl QuicClient {
    /// From a TLS client config: TLS 1.3 only (QUIC has no other), ALPN `h3`, early data when 0-RTT
    /// is asked for.
    pub fn new(tls: Arc<rustls::ClientConfig>, options: H3Options) -> Result<Self, EngineError> {
        let mut tls = Arc::unwrap_or_clone(tls);
        tls.alpn_protocols = vec![b"h3".to_vec()];
        tls.enable_early_data = options.zero_rtt;
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls)
            .map_err(|e| EngineError::Settings(format!("cannot use this TLS set-up for QUIC (TLS 1.3 only): {e}")))?;
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        config.transport_config(Arc::new(transport()));
        Ok(QuicClient { config, options })
    }

    /// The QUIC client set-up the pool connects with (TLS, ALPN, windows): bench/floor's HTTP/3
    /// client connects with it too, so that only what is on top of QUIC differs.
    pub fn quinn_config(&self) -> quinn::ClientConfig {
        self.config.clone()
    }
}

/// What a server may send a connection before it reads: the stream and connection windows of
/// HTTP/2's client (quinn's connection window is unlimited by default), no request streams of the
/// server's (RFC 9114 §6.1 forbids them) and no datagrams (never asked for).
fn transport() -> quinn::TransportConfig {
    use crate::h2client::{CONNECTION_WINDOW, STREAM_WINDOW};
    let mut transport = quinn::TransportConfig::default();
    transport
        .stream_receive_window(STREAM_WINDOW.into())
        .receive_window(CONNECTION_WINDOW.into())
        .max_concurrent_bidi_streams(0u32.into())
        .max_concurrent_uni_streams(MAX_SERVER_STREAMS.into())
        .datagram_receive_buffer_size(None);
    transport
}

/// Unidirectional streams a server may have open at once: its control and two QPACK streams,
/// and room for the streams of unknown types some send to keep clients honest (RFC 9114 §6.2.3).
const MAX_SERVER_STREAMS: u32 = 16;

/// A connection whose HTTP/3 set-up has not finished: closed, and its bytes counted, if the set-up
/// fails or is given up (the connect timeout drops it), so no QUIC connection outlives it.
struct SetUp<'a> {
    quic: Option<quinn::Connection>,
    wire: &'a Mutex<WireBook>,
}

impl SetUp<'_> {
    /// The set-up finished: the connection goes into the book of open ones.
    fn done(mut self) {
        let quic = self.quic.take().expect("a connection being set up");
        let mut book = self.wire.lock().unwrap_or_else(|p| p.into_inner());
        book.fold_closed();
        book.open.push(quic);
    }
}

impl Drop for SetUp<'_> {
    fn drop(&mut self) {
        let Some(quic) = self.quic.take() else { return };
        quic.close(H3_NO_ERROR.into(), b"HTTP/3 set-up did not finish");
        let mut book = self.wire.lock().unwrap_or_else(|p| p.into_inner());
        book.closed = add(book.closed, &quic);
    }
}

const H3_NO_ERROR: u32 = 0x100;

impl H3Pool {
    pub fn new(
        host: &str,
        addrs: Vec<SocketAddr>,
        client: QuicClient,
        connections: usize,
        fresh_each_call: bool,
    ) -> Self {
        let slots = (0..connections.max(1)).map(|_| tokio::sync::Mutex::new(None)).collect();
        H3Pool {
            addrs,
            lookup: None,
            server_name: None,
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            client,
            endpoint: OnceLock::new(),
            fresh_each_call,
            connect_timeout: None,
            slots,
            wire: Mutex::default(),
            failures: FailureTally::default(),
            early_refused: Arc::default(),
        }
    }

    /// Names the server `name` in the TLS handshake (SNI) and checks its certificate against that
    /// name instead of the host.
    pub fn with_server_name(mut self, name: &str) -> Self {
        self.server_name = Some(name.to_string());
        self
    }

    /// Looks the host up for each connection, as [`crate::net::Endpoint::with_lookup_per_connection`]
    /// does; the address taken is the first of the family the pool's UDP socket has.
    pub fn with_lookup_per_connection(mut self, allowed: crate::net::Allowed) -> Self {
        if self.host.parse::<std::net::IpAddr>().is_err() {
            self.lookup = Some(allowed);
        }
        self
    }

    /// Whether each connection looks the host up.
    pub fn looks_up_per_connection(&self) -> bool {
        self.lookup.is_some()
    }

    /// The address of a new connection, and how long looking it up took (None: found once).
    async fn address(&self) -> Result<(SocketAddr, Option<Duration>), Failed> {
        let Some(allowed) = &self.lookup else { return Ok((self.addrs[0], None)) };
        let started = Instant::now();
        let port = self.addrs[0].port();
        let found = crate::net::resolve(&self.host, port, |ip| allowed(ip))
            .await
            .map_err(|e| (ConnectFailure::Other(e.to_string()), e))?;
        let addr = found.iter().find(|a| a.is_ipv6() == self.addrs[0].is_ipv6()).copied().ok_or_else(|| {
            let message = format!("{} no longer resolves to an address of the family first found", self.host);
            (ConnectFailure::Other(message.clone()), EngineError::Target(message))
        })?;
        Ok((addr, Some(started.elapsed())))
    }

    /// Gives up on a connection whose handshake took longer than `limit` (None: never).
    pub fn with_connect_timeout(mut self, limit: Option<Duration>) -> Self {
        self.connect_timeout = limit;
        self
    }

    pub async fn get(&self, slot: usize) -> Result<Connected<H3Handle>, ErrorKind> {
        if self.fresh_each_call {
            let (handle, handshake) = self.open_counted().await?;
            return Ok(Connected::new(handle, handshake));
        }
        let mut shared = self.slots[slot % self.slots.len()].lock().await;
        if let Some(handle) = shared.as_ref().filter(|h| h.is_usable()) {
            return Ok(Connected::existing(handle.clone()));
        }
        let (handle, handshake) = self.open_counted().await?;
        *shared = Some(handle.clone());
        Ok(Connected::new(handle, handshake))
    }

    /// Bytes in the UDP datagrams of every connection so far (QUIC and TLS included).
    pub fn wire(&self) -> WireTotals {
        self.wire.lock().unwrap_or_else(|p| p.into_inner()).totals().0
    }

    /// What quinn's loss recovery counted on every connection so far.
    pub fn quic(&self) -> QuicCounts {
        self.wire.lock().unwrap_or_else(|p| p.into_inner()).totals().1
    }

    pub fn connect_failures(&self) -> ConnectFailures {
        self.failures.totals()
    }

    async fn open_counted(&self) -> Result<(H3Handle, Handshake), ErrorKind> {
        let opened = Box::pin(self.open()).await;
        opened.map_err(|(failure, _)| {
            self.failures.count(&failure);
            ErrorKind::Connect
        })
    }

    /// Opens one connection outside any run (the probe), with the reason if it fails: no answer or
    /// a refused handshake is an [`EngineError::Target`], no UDP socket an [`EngineError::Machine`],
    /// an HTTP/3 set-up the server breaks an [`EngineError::Protocol`].
    pub async fn open_uncounted(&self) -> Result<H3Handle, EngineError> {
        self.open().await.map(|(handle, _)| handle).map_err(|(_, error)| error)
    }

    async fn open(&self) -> Result<(H3Handle, Handshake), Failed> {
        let Some(limit) = self.connect_timeout else { return self.open_unbounded().await };
        tokio::time::timeout(limit, self.open_unbounded()).await.unwrap_or_else(|_| Err(self.timed_out()))
    }

    /// No connection in time: the connect timeout passed, or QUIC's idle timeout in the handshake.
    fn timed_out(&self) -> Failed {
        let message = format!(
            "no QUIC connection to {}:{} within the connect timeout: is an HTTP/3 server listening on UDP?",
            self.host,
            self.addrs[0].port()
        );
        (ConnectFailure::TimedOut, EngineError::Target(message))
    }

    fn handshake_failure(&self, addr: SocketAddr, e: quinn::ConnectionError) -> Failed {
        let message = match e {
            quinn::ConnectionError::TimedOut => return self.timed_out(),
            quinn::ConnectionError::ConnectionClosed(c) if c.error_code == quinn::TransportErrorCode::crypto(120) => {
                format!("{addr} did not agree to HTTP/3 (ALPN h3)")
            }
            e => format!("QUIC handshake with {addr} failed: {e}"),
        };
        (ConnectFailure::Handshake(message.clone()), EngineError::Target(message))
    }

    fn endpoint(&self) -> Result<&quinn::Endpoint, Failed> {
        let made = self.endpoint.get_or_init(|| {
            let any: SocketAddr =
                if self.addrs[0].is_ipv6() { "[::]:0" } else { "0.0.0.0:0" }.parse().expect("an address");
            quinn::Endpoint::client(any).map_err(|e| format!("cannot open a UDP socket for QUIC: {e}"))
        });
        made.as_ref().map_err(|e| (ConnectFailure::Other(e.clone()), EngineError::Machine(e.clone())))
    }

    async fn open_unbounded(&self) -> Result<(H3Handle, Handshake), Failed> {
        let endpoint = self.endpoint()?;
        let (addr, lookup) = self.address().await?;
        let started = Instant::now();
        let connecting = endpoint
            .connect_with(self.client.config.clone(), addr, self.server_name.as_deref().unwrap_or(&self.host))
            .map_err(|e| {
                let message = format!("cannot connect to {addr} over QUIC: {e}");
                let error = match e {
                    // What the caller gave: a server name or an address QUIC cannot use.
                    quinn::ConnectError::InvalidServerName(_) | quinn::ConnectError::InvalidRemoteAddress(_) => {
                        EngineError::Settings(message.clone())
                    }
                    _ => EngineError::Machine(message.clone()),
                };
                (ConnectFailure::Other(message), error)
            })?;
        // With a ticket, 0-RTT gives the connection at once: the request goes in the first flight.
        let try_early = self.client.options.zero_rtt && !self.early_refused.swap(false, Ordering::Relaxed);
        let early = if try_early { connecting.into_0rtt() } else { Err(connecting) };
        let draining = Arc::new(AtomicBool::new(false));
        let (quic, early) = match early {
            Ok((quic, accepted)) => {
                let refused = [draining.clone(), self.early_refused.clone()];
                (quic, Some(early_verdict(accepted, refused)))
            }
            Err(connecting) => (connecting.await.map_err(|e| self.handshake_failure(addr, e))?, None),
        };
        let handshake = Handshake::quic(started.elapsed()).after_lookup(lookup);
        let setting_up = SetUp { quic: Some(quic.clone()), wire: &self.wire };
        let bounded = crate::h3bounds::Connection::new(quic.clone(), draining.clone());
        let (mut driver, send) = h3::client::builder()
            .max_field_section_size(crate::h2client::MAX_HEADER_LIST as u64)
            .build(bounded)
            .await
            .map_err(|e| {
                let message = format!("HTTP/3 set-up with {addr} failed: {e}");
                (ConnectFailure::Other(message.clone()), EngineError::Protocol(message))
            })?;
        setting_up.done();
        // The connection's control streams are read by this task until it closes.
        tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
        let mut released = None;
        if self.fresh_each_call && self.client.options.zero_rtt {
            // Open a little after its call (h3 closes it when the last sender goes) for the
            // server's ticket, so the next cold call resumes with 0-RTT, as a returning client's would.
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let (keep, rtt) = (send.clone(), quic.clone());
            tokio::spawn(async move {
                let _ = rx.await;
                tokio::time::sleep((rtt.rtt() * 2).min(TICKET_WAIT)).await;
                drop(keep);
            });
            released = Some(Arc::new(tx));
        }
        Ok((H3Handle { send, quic, draining, early, _released: released }, handshake))
    }
}

/// The server's word on 0-RTT, once the handshake gives it; a refusal sets `refused` (the
/// connection's draining, as its early streams, h3's control stream among them, are gone, and the
/// pool's note to make the next handshake a full one) before it is told.
fn early_verdict(
    accepted: quinn::ZeroRttAccepted,
    refused: [Arc<AtomicBool>; 2],
) -> tokio::sync::watch::Receiver<Option<bool>> {
    let (tell, verdict) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        let accepted = accepted.await;
        if !accepted {
            refused.iter().for_each(|flag| flag.store(true, Ordering::Relaxed));
        }
        let _ = tell.send(Some(accepted));
    });
    verdict
}

/// A connection that did not open: what the pool's tally counts, and the error an uncounted open
/// gives.
type Failed = (ConnectFailure, EngineError);
