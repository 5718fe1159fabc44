//! Connections for the network targets: name resolution with the loopback rule, TCP (no Nagle),
//! optional TLS, and byte counting at the socket.

pub mod counted;
pub mod failures;
pub mod socket;
pub mod tls;
pub mod uring;

use crate::record::{ErrorKind, Handshake};
use crate::target::WireTotals;
use crate::EngineError;
use counted::{Counted, WireCounter};
use failures::{ConnectFailure, ConnectFailures, FailureTally};
use rustls::pki_types::ServerName;
use socket::Socket;
use std::io::IoSlice;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// Whether an address is this machine's loopback (127.0.0.0/8, ::1, or ::ffff:127.x.y.z).
pub fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Resolves `host:port` and refuses it if any of its addresses fails `allowed` (the caller's rule:
/// loopback, a link callbench made, or anything with --allow-remote). Resolving sends nothing to
/// the target, so this decides before any connection is attempted. A name that does not resolve
/// is an [`EngineError::Target`], an address the rule refuses an [`EngineError::NotAllowed`].
pub async fn resolve(
    host: &str,
    port: u16,
    allowed: impl Fn(IpAddr) -> Result<(), String>,
) -> Result<Vec<SocketAddr>, EngineError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| EngineError::Target(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(EngineError::Target(format!("{host} resolves to no address")));
    }
    for addr in &addrs {
        allowed(addr.ip())
            .map_err(|why| EngineError::NotAllowed(format!("refusing to load {host} ({}): {why}", addr.ip())))?;
    }
    Ok(addrs)
}

/// Decides whether an address may be loaded (the loopback rule; see [`resolve`]).
pub type Allowed = Arc<dyn Fn(IpAddr) -> Result<(), String> + Send + Sync>;

/// Where to connect, and how.
pub struct Endpoint {
    /// The host as the user wrote it (Host header, :authority, TLS server name).
    pub host: String,
    pub port: u16,
    pub addrs: Vec<SocketAddr>,
    /// When set, the host is looked up again for each connection (as a new client would), its
    /// addresses checked by this rule, instead of `addrs` found once.
    lookup: Option<Allowed>,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    counter: Arc<WireCounter>,
    /// Why the counted connects failed.
    failures: FailureTally,
    /// A connection (TCP and TLS handshakes) not open by then has failed.
    connect_timeout: Option<Duration>,
    /// Sockets driven through io_uring (one ring for the endpoint's connections), not epoll.
    io_uring: bool,
    ring: OnceLock<Result<uring::RingOwner, EngineError>>,
}

impl Endpoint {
    /// `tls`: a client config when the scheme is https/grpcs.
    pub fn new(
        host: &str,
        port: u16,
        addrs: Vec<SocketAddr>,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> Result<Self, EngineError> {
        let tls = match tls {
            None => None,
            Some(config) => {
                let bare = host.trim_start_matches('[').trim_end_matches(']');
                let name = ServerName::try_from(bare.to_string())
                    .map_err(|e| EngineError::Settings(format!("{host} is not a valid TLS server name: {e}")))?;
                Some((TlsConnector::from(config), name))
            }
        };
        Ok(Endpoint {
            host: host.to_string(),
            port,
            addrs,
            lookup: None,
            tls,
            counter: Arc::default(),
            failures: FailureTally::default(),
            connect_timeout: None,
            io_uring: false,
            ring: OnceLock::new(),
        })
    }

    /// Looks the host up for each connection, its addresses checked by `allowed` each time: a
    /// connection's handshake then starts with its name lookup. No effect on an address.
    pub fn with_lookup_per_connection(mut self, allowed: Allowed) -> Self {
        let bare = self.host.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<IpAddr>().is_err() {
            self.lookup = Some(allowed);
        }
        self
    }

    /// Whether each connection looks the host up.
    pub fn looks_up_per_connection(&self) -> bool {
        self.lookup.is_some()
    }

    /// Drives this endpoint's sockets through io_uring (see [`uring::available`] first).
    pub fn with_io_uring(mut self, on: bool) -> Self {
        self.io_uring = on;
        self
    }

    /// Names the server `name` in the TLS handshake (SNI) and checks its certificate against that
    /// name instead of the target's host; no effect without TLS.
    pub fn with_server_name(mut self, name: &str) -> Result<Self, EngineError> {
        if let Some((_, server)) = self.tls.as_mut() {
            *server = ServerName::try_from(name.to_string())
                .map_err(|e| EngineError::Settings(format!("{name} is not a valid TLS server name: {e}")))?;
        }
        Ok(self)
    }

    /// Gives up on a connection whose handshakes took longer than `limit` (None: never).
    pub fn with_connect_timeout(mut self, limit: Option<Duration>) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// Which kernel interface drives the sockets: `io_uring` or `epoll`.
    pub fn io(&self) -> &'static str {
        if self.io_uring {
            "io_uring"
        } else {
            "epoll"
        }
    }

    /// A connected socket as the chosen interface drives it. The ring starts with the first
    /// connection, on the runtime that makes it.
    fn socket(&self, tcp: TcpStream) -> Result<Socket, String> {
        if !self.io_uring {
            return Ok(Socket::Epoll(tcp));
        }
        let ring = self.ring.get_or_init(uring::RingOwner::start).as_ref().map_err(ToString::to_string)?;
        let handed = tcp.into_std().and_then(|std| ring.stream(std));
        handed.map(Socket::Uring).map_err(|e| format!("cannot hand the socket to io_uring: {e}"))
    }

    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// `host:port`, as the Host header and :authority want it.
    pub fn authority(&self) -> String {
        let default = if self.is_tls() { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Bytes on the wire of every connection opened through this endpoint.
    pub fn wire(&self) -> WireTotals {
        self.counter.totals()
    }

    /// Why the counted connections failed so far.
    pub fn connect_failures(&self) -> ConnectFailures {
        self.failures.totals()
    }

    /// Counts a counted connection that failed after its handshakes (the server refused the protocol).
    pub fn count_failure(&self, failure: ConnectFailure) -> ErrorKind {
        self.failures.count(&failure);
        ErrorKind::Connect
    }

    /// A counted connection (its bytes add to [`Endpoint::wire`], its failure to
    /// [`Endpoint::connect_failures`]), and how long its handshakes took.
    pub async fn connect(&self) -> Result<(Stream, Handshake), ErrorKind> {
        // Boxed: a TLS handshake's state is kilobytes, and inline it would be part of every
        // caller's future for the whole run; one allocation per connection is nothing beside a connect.
        let opening = Box::pin(self.open(self.counter.clone()));
        opening.await.map_err(|(failure, _)| self.count_failure(failure))
    }

    /// A connection whose bytes are not counted (probes before a run), with the reason if it fails:
    /// an [`EngineError::Machine`] when this process has no file descriptor or local port left (or
    /// io_uring fails it), else what resolving or connecting says.
    pub async fn connect_uncounted(&self) -> Result<(Stream, Handshake), EngineError> {
        self.open(Arc::default()).await.map_err(|(_, error)| error)
    }

    async fn open(&self, counter: Arc<WireCounter>) -> Result<(Stream, Handshake), (ConnectFailure, EngineError)> {
        let Some(limit) = self.connect_timeout else { return self.open_unbounded(counter).await };
        match tokio::time::timeout(limit, self.open_unbounded(counter)).await {
            Ok(opened) => opened,
            Err(_) => Err((
                ConnectFailure::TimedOut,
                EngineError::Target(format!(
                    "no connection to {} within the connect timeout ({limit:?})",
                    self.authority()
                )),
            )),
        }
    }

    /// The addresses to try for a new connection, and how long looking them up took (None: found
    /// once, before the run).
    async fn addresses(&self) -> Result<(Vec<SocketAddr>, Option<Duration>), (ConnectFailure, EngineError)> {
        let Some(allowed) = &self.lookup else { return Ok((self.addrs.clone(), None)) };
        let started = Instant::now();
        let addrs = resolve(&self.host, self.port, |ip| allowed(ip))
            .await
            .map_err(|e| (ConnectFailure::Other(e.to_string()), e))?;
        Ok((addrs, Some(started.elapsed())))
    }

    async fn open_unbounded(
        &self,
        counter: Arc<WireCounter>,
    ) -> Result<(Stream, Handshake), (ConnectFailure, EngineError)> {
        let (addrs, lookup) = self.addresses().await?;
        let mut last = (ConnectFailure::Other("no address".into()), EngineError::Target(String::new()));
        for addr in &addrs {
            let started = Instant::now();
            match TcpStream::connect(addr).await {
                Ok(tcp) => {
                    let connected = Instant::now();
                    let tcp_time = connected - started;
                    let _ = tcp.set_nodelay(true);
                    let socket = match self.socket(tcp) {
                        Ok(socket) => socket,
                        Err(e) => {
                            last = (ConnectFailure::Other(e.clone()), EngineError::Machine(e));
                            continue;
                        }
                    };
                    let counted = Counted::new(socket, counter);
                    return match &self.tls {
                        None => Ok((Stream::Plain(counted), Handshake::tcp(tcp_time, None).after_lookup(lookup))),
                        Some((connector, name)) => connector
                            .connect(name.clone(), counted)
                            .await
                            .map(|tls| {
                                let handshake =
                                    Handshake::tcp(tcp_time, Some(connected.elapsed())).after_lookup(lookup);
                                (Stream::Tls(Box::new(tls)), handshake)
                            })
                            .map_err(|e| {
                                let message = format!("TLS handshake with {addr} failed: {e}");
                                (ConnectFailure::Handshake(message.clone()), EngineError::Target(message))
                            }),
                    };
                }
                Err(e) => {
                    let failure = ConnectFailure::of(&e);
                    let message = format!("cannot connect to {addr}: {e}");
                    let error = match failure {
                        // This process's limits, not the target's: more connections than it may open.
                        ConnectFailure::OpenFiles | ConnectFailure::LocalPorts => EngineError::Machine(message),
                        _ => EngineError::Target(message),
                    };
                    last = (failure, error);
                }
            }
        }
        Err(last)
    }
}

/// A connection, plain or TLS, counted at the socket.
pub enum Stream {
    Plain(Counted<Socket>),
    Tls(Box<TlsStream<Counted<Socket>>>),
}

impl Stream {
    /// The protocol the server chose by ALPN (TLS only).
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(tls) => tls.get_ref().1.alpn_protocol(),
        }
    }
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Plain($s) => {
                let $s = Pin::new($s);
                $e
            }
            Stream::Tls($s) => {
                let $s = Pin::new($s.as_mut());
                $e
            }
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        delegate!(self, s => s.poll_write(cx, buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        delegate!(self, s => s.poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        delegate!(self, s => s.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_rule() {
        for ip in ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.1", "192.168.1.1", "8.8.8.8", "::2", "fe80::1", "0.0.0.0"] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn every_address_passes_the_rule_before_anything_is_sent() {
        let loopback = |ip: IpAddr| if is_loopback(ip) { Ok(()) } else { Err("not loopback".to_string()) };
        let err = resolve("10.1.2.3", 80, loopback).await.unwrap_err();
        assert_eq!(err, EngineError::NotAllowed("refusing to load 10.1.2.3 (10.1.2.3): not loopback".into()));
        assert_eq!(resolve("10.1.2.3", 80, |_| Ok(())).await.unwrap().len(), 1);
        assert!(resolve("localhost", 80, loopback).await.unwrap().iter().all(|a| a.ip().is_loopback()));
        assert!(resolve("[::1]", 80, loopback).await.is_ok());
    }

    #[tokio::test]
    async fn connect_counts_and_reports_refusal() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let endpoint = Endpoint::new("127.0.0.1", addr.port(), vec![addr], None).unwrap();
        let accept = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let (mut s, _) = listener.accept().await.unwrap();
            s.write_all(b"hi").await.unwrap();
        });
        let (mut stream, handshake) = endpoint.connect().await.unwrap();
        assert_eq!(handshake.tls, None);
        accept.await.unwrap();
        let mut buf = [0u8; 2];
        tokio::io::AsyncReadExt::read_exact(&mut stream, &mut buf).await.unwrap();
        assert_eq!(endpoint.wire(), WireTotals { sent: 0, received: 2 });
        drop(stream);
        let closed = Endpoint::new("127.0.0.1", 1, vec!["127.0.0.1:1".parse().unwrap()], None).unwrap();
        let Err(e) = closed.connect_uncounted().await else { panic!("port 1 accepted") };
        assert!(matches!(&e, EngineError::Target(m) if m.contains("cannot connect")), "{e:?}");
    }
}
