//! Connections to a server under test, plain or TLS. Which addresses speak TLS is said by whoever
//! started the server there (`callbench verify --tls`, a `+tls` cell of `callbench run`); every
//! client of verify — its own HTTP/1.1 and gRPC clients and the load engine's — dials through here.
//! The reference servers make a fresh self-signed certificate at every start, so it is not checked
//! against a CA; the handshake's signatures are (the server holds the certificate's key).

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

pub fn is_tls(addr: SocketAddr) -> bool {
    TLS_PEERS.lock().unwrap_or_else(|p| p.into_inner()).contains(&addr)
}

/// The engine's endpoint for `addr`, offering `alpn` when it speaks TLS.
pub fn endpoint(addr: SocketAddr, alpn: &[&[u8]]) -> Result<Endpoint, String> {
    let host = match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    let config = match is_tls(addr) {
        true => Some(tls::client_config(&tls::TlsOptions { insecure: true, ..Default::default() }, alpn)?),
        false => None,
    };
    Endpoint::new(&host, addr.port(), vec![addr], config)
}

/// A connection to `addr` (TCP, and TLS when it speaks it), within 5 s.
pub async fn connect(addr: SocketAddr, alpn: &[&[u8]]) -> anyhow::Result<Stream> {
    let endpoint = endpoint(addr, alpn).map_err(|e| anyhow::anyhow!(e))?;
    match tokio::time::timeout(Duration::from_secs(5), endpoint.connect_uncounted()).await {
        Err(_) => anyhow::bail!("cannot connect to {addr}: timed out"),
        Ok(Err(e)) => anyhow::bail!(e),
        Ok(Ok((stream, _))) => Ok(stream),
    }
}
