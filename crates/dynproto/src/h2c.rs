//! A plaintext HTTP/2 (h2c, prior knowledge) connection for reflection, for
//! callers without a connection of their own (tests, a one-off `describe`).
//! Over TLS, open the engine's `Connection` yourself and use `ReflectionConn::new`.

use crate::reflection::ReflectionConn;
use crate::DynprotoError;
use callbench_engine::h2pool::Connection;
use std::time::Duration;
use tokio::net::TcpStream;

/// Connects to `addr` (`host:port`) within `timeout` and waits for the server's SETTINGS; the
/// connection is driven by its own tasks until every handle to it is dropped.
pub async fn connect_h2c(addr: &str, timeout: Duration) -> Result<ReflectionConn, DynprotoError> {
    let connect = async {
        let tcp = TcpStream::connect(addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let connection = Connection::start(tcp);
        connection.settled().await.map_err(|e| {
            format!(
                "HTTP/2 handshake with {addr} failed: {e} (is the peer an HTTP/2 server, and TLS or not as expected?)"
            )
        })?;
        Ok(ReflectionConn::new(connection, addr, "http"))
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(result) => result.map_err(DynprotoError::Connect),
        Err(_) => Err(DynprotoError::Connect(format!("cannot connect to {addr}: no answer within {timeout:?}"))),
    }
}
