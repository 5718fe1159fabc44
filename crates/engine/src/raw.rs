//! The floor as a target: a message of `size` bytes out, the same bytes back from an echo, nothing
//! on top (no framing, no parsing). What a call costs here is what the kernel and the driver loop
//! cost, so a suite can show it beside REST, gRPC and in-process calls (`raw://host:port`).

use crate::net::failures::ConnectFailures;
use crate::net::{Endpoint, Stream};
use crate::record::{ByteCounts, ErrorKind};
use crate::target::{Connected, Reply, Target, WireTotals};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

pub struct Raw {
    endpoint: Endpoint,
    message: Vec<u8>,
}

pub struct RawConn {
    stream: Stream,
    /// The message's size and [`ROOM`] more.
    echo: Vec<u8>,
}

/// Bytes read for beyond the message: a read that leaves room tells tokio the socket is drained
/// (it clears readiness on a short read), so the next call's first receive is not a system call
/// that can only answer EAGAIN. Exactly-sized reads cost one such call per call (strace: 1.5
/// receives per call at one call in flight).
pub(crate) const ROOM: usize = 4096;

impl Raw {
    /// Calls of `size` bytes each way (at least one) to the echo at `endpoint`.
    pub fn new(endpoint: Endpoint, size: usize) -> Raw {
        Raw { endpoint, message: message(size) }
    }

    pub fn size(&self) -> usize {
        self.message.len()
    }
}

impl Target for Raw {
    type Conn = RawConn;

    async fn connect(&self, _slot: usize) -> Result<Connected<RawConn>, ErrorKind> {
        let (stream, handshake) = self.endpoint.connect().await?;
        Ok(Connected::new(RawConn { stream, echo: vec![0; self.message.len() + ROOM] }, handshake))
    }

    async fn call(&self, conn: &mut RawConn) -> Reply {
        if conn.stream.write_all(&self.message).await.is_err() {
            return Reply::broken(ErrorKind::Io, ByteCounts { sent: self.message.len() as u64, received: 0 });
        }
        read_echo(&mut conn.stream, &mut conn.echo, &self.message).await
    }

    fn wire(&self) -> WireTotals {
        self.endpoint.wire()
    }

    fn connect_failures(&self) -> ConnectFailures {
        self.endpoint.connect_failures()
    }
}

/// A call's message of `size` bytes (at least one): not all one byte, so that an echo that answers
/// with other bytes is seen.
pub(crate) fn message(size: usize) -> Vec<u8> {
    (0..size.max(1)).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Reads the echo of `message` into `echo` (its size and [`ROOM`] more): the call's reply.
pub(crate) async fn read_echo<S: AsyncRead + Unpin>(stream: &mut S, echo: &mut [u8], message: &[u8]) -> Reply {
    let size = message.len() as u64;
    let mut filled = 0;
    while filled < message.len() {
        match stream.read(&mut echo[filled..]).await {
            Ok(n) if n > 0 => filled += n,
            _ => return Reply::broken(ErrorKind::Io, ByteCounts { sent: size, received: filled as u64 }),
        }
    }
    let bytes = ByteCounts { sent: size, received: filled as u64 };
    if echo[..filled] != message[..] {
        // The stream is out of step with the calls: the next answer cannot be told apart.
        return Reply::broken(ErrorKind::Validation, bytes);
    }
    Reply::ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn target(answer: impl Fn(Vec<u8>) -> Vec<u8> + Send + 'static) -> Raw {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 16];
            while s.read_exact(&mut buf).await.is_ok() {
                if s.write_all(&answer(buf.clone())).await.is_err() {
                    return;
                }
            }
        });
        Raw::new(Endpoint::new("127.0.0.1", addr.port(), vec![addr], None).unwrap(), 16)
    }

    #[tokio::test]
    async fn an_echo_answers_every_call_and_its_bytes_are_counted() {
        let raw = target(|m| m).await;
        let mut conn = raw.connect(0).await.unwrap().conn;
        for _ in 0..3 {
            let reply = raw.call(&mut conn).await;
            assert_eq!(reply.outcome, Outcome::Ok);
            assert_eq!(reply.bytes, ByteCounts { sent: 16, received: 16 });
        }
        assert_eq!(raw.wire(), WireTotals { sent: 48, received: 48 });
    }

    #[tokio::test]
    async fn other_bytes_back_fail_the_call_and_end_the_connection() {
        let raw = target(|m| m.iter().rev().copied().collect()).await;
        let mut conn = raw.connect(0).await.unwrap().conn;
        let reply = raw.call(&mut conn).await;
        assert_eq!(reply.outcome, Outcome::Error(ErrorKind::Validation));
        assert!(!reply.keep_connection);
    }

    #[tokio::test]
    async fn an_answer_longer_than_the_message_fails_the_call() {
        // One write of 17 bytes arrives whole, within the room read for beyond the message.
        let raw = target(|m| [m, b"x".to_vec()].concat()).await;
        let mut conn = raw.connect(0).await.unwrap().conn;
        let reply = raw.call(&mut conn).await;
        assert_eq!(reply.outcome, Outcome::Error(ErrorKind::Validation));
        assert_eq!(reply.bytes, ByteCounts { sent: 16, received: 17 });
    }

    #[tokio::test]
    async fn a_server_that_closes_is_an_io_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { drop(listener.accept().await.unwrap()) });
        let raw = Raw::new(Endpoint::new("127.0.0.1", addr.port(), vec![addr], None).unwrap(), 16);
        let mut conn = raw.connect(0).await.unwrap().conn;
        let reply = raw.call(&mut conn).await;
        assert_eq!(reply.outcome, Outcome::Error(ErrorKind::Io));
        assert!(!reply.keep_connection);
    }
}
