//! Connections to a server under test, plain or TLS. Which addresses speak TLS is said by whoever
//! started the server there (`callbench verify --tls`, a `+tls` cell of `callbench run`); every
//! client of verify — its own HTTP/1.1 and gRPC clients and the load engine's — dials through here.
//! The reference servers make a fresh self-signed certificate at every start, so it is not checked
//! against a CA; the handshake's signatures are (the server holds the certificate's key).

use crate::VerifyError;
use callbench_engine::net::{tls, Endpoint, Stream};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

static TLS_PEERS: Mutex<BTreeSet<SocketAddr>> = Mutex::new(BTreeSet::new());

/// Calls to `addr` go over TLS from now on (until [`plain`]).
pub fn speaks_tls(addr: SocketAddr) {
    TLS_PEERS.lock().unwrap_or_else(|p| p.into_inner()).insert(addr);
}

/// Calls to `addr` go in the clear again (its TLS server stopped; the port may be reused).
pub fn plain(addr: SocketAddr) {
    TLS_PEERS.lock().unwrap_or_else(|p| p.into_inner()).remove(&addr);
}

pub(crate) fn is_tls(addr: SocketAddr) -> bool {
    TLS_PEERS.lock().unwrap_or_else(|p| p.into_inner()).contains(&addr)
}

/// Why a server could not be dialled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DialError {
    /// The client's TLS could not be set up (this machine's, not the server's).
    #[error("{0}")]
    Client(String),
    /// No TCP connection within the time (refused, unreachable, timed out).
    #[error("{0}")]
    Connect(String),
    /// The server's TLS: a failed handshake, or no certificate.
    #[error("{0}")]
    Handshake(String),
}

/// The message, for callers whose own errors are still strings.
impl From<DialError> for String {
    fn from(e: DialError) -> String {
        e.to_string()
    }
}

/// The engine's endpoint for `addr`, offering `alpn` when it speaks TLS.
pub(crate) fn endpoint(addr: SocketAddr, alpn: &[&[u8]]) -> Result<Endpoint, DialError> {
    let host = match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    let config = match is_tls(addr) {
        true => Some(
            tls::client_config(&tls::TlsOptions { insecure: true, ..Default::default() }, alpn)
                .map_err(|e| DialError::Client(e.into()))?,
        ),
        false => None,
    };
    Endpoint::new(&host, addr.port(), vec![addr], config).map_err(|e| DialError::Client(e.into()))
}

/// A connection to `addr` (TCP, and TLS when it speaks it), within 5 s; none is
/// [`VerifyError::Unreachable`].
pub(crate) async fn connect(addr: SocketAddr, alpn: &[&[u8]]) -> Result<Stream, VerifyError> {
    let endpoint = endpoint(addr, alpn).map_err(|e| VerifyError::Unreachable(e.to_string()))?;
    match tokio::time::timeout(Duration::from_secs(5), endpoint.connect_uncounted()).await {
        Err(_) => Err(VerifyError::Unreachable(format!("cannot connect to {addr}: timed out"))),
        Ok(Err(e)) => Err(VerifyError::Unreachable(e.to_string())),
        Ok(Ok((stream, _))) => Ok(stream),
    }
}

/// The certificate a TLS server at `addr` presents (its leaf, as PEM), from one handshake that
/// accepts any certificate: what a client that is to trust a self-signed server is given.
pub fn server_certificate_pem(addr: SocketAddr, timeout: Duration) -> Result<String, DialError> {
    use base64::Engine;
    let config = tls::client_config(&tls::TlsOptions { insecure: true, ..Default::default() }, &[])
        .map_err(|e| DialError::Client(e.into()))?;
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(|e| DialError::Client(e.to_string()))?;
    let mut conn =
        rustls::ClientConnection::new(config, name).map_err(|e| DialError::Client(format!("TLS client: {e}")))?;
    let mut stream = std::net::TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| DialError::Connect(format!("connect {addr}: {e}")))?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| DialError::Connect(e.to_string()))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut stream).map_err(|e| DialError::Handshake(format!("TLS handshake with {addr}: {e}")))?;
    }
    let leaf = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .ok_or_else(|| DialError::Handshake(format!("{addr} sent no certificate")))?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(leaf);
    let lines: Vec<&str> =
        b64.as_bytes().chunks(64).map(|l| std::str::from_utf8(l).expect("base64 is ASCII")).collect();
    Ok(format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", lines.join("\n")))
}
