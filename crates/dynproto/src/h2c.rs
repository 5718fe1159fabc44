//! A plaintext HTTP/2 (h2c, prior knowledge) connection for reflection, for
//! callers without a connection of their own (tests, a one-off `describe`).
//! Over TLS, build the `SendRequest` yourself and use `ReflectionConn::new`.

use crate::reflection::ReflectionConn;
use std::time::Duration;
use tokio::net::TcpStream;

/// Connects to `addr` (`host:port`) within `timeout`; the connection is
/// driven by a spawned task until every handle to it is dropped.
pub async fn connect_h2c(addr: &str, timeout: Duration) -> Result<ReflectionConn, String> {
    let connect = async {
        let tcp = TcpStream::connect(addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let (send, connection) =
            h2::client::handshake(tcp).await.map_err(|e| format!("HTTP/2 handshake with {addr} failed: {e}"))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(ReflectionConn::new(send, addr, "http"))
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(result) => result,
        Err(_) => Err(format!("cannot connect to {addr}: no answer within {timeout:?}")),
    }
}
