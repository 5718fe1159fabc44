//! What a raw server (servers/raw-echo, protocol "raw") must do: every byte back, in order, on the
//! connection it came on — small messages, one larger than the socket buffers, several connections
//! at once — and the same through the load engine's own raw:// target, which measures it.

use crate::error::{because, chain};
use crate::report::Outcome;
use crate::VerifyError::{self, BadInput, Contract, Unreachable};
use callbench_engine::net::Endpoint;
use callbench_engine::raw::Raw;
use callbench_engine::{Outcome as CallOutcome, Target};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: Duration = Duration::from_secs(10);

/// Bytes that are not all alike, so that an answer from the wrong place is seen.
fn message(size: usize, seed: u8) -> Vec<u8> {
    (0..size).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Sends `size` bytes on `s` and reads as many back (writing and reading at once: an echo that is
/// sent more than its buffers hold can only go on if we read while we write).
async fn round_trip(s: &mut TcpStream, size: usize, seed: u8) -> Result<(), VerifyError> {
    let sent = message(size, seed);
    let (mut r, mut w) = s.split();
    let mut back = vec![0u8; size];
    let (wrote, read) = tokio::join!(w.write_all(&sent), r.read_exact(&mut back));
    wrote.map_err(|e| Unreachable(because("send", &e)))?;
    read.map_err(|e| Unreachable(because("read the echo", &e)))?;
    if back != sent {
        return Err(Contract(format!("{size} bytes came back different")));
    }
    Ok(())
}

async fn connect(addr: SocketAddr) -> Result<TcpStream, VerifyError> {
    let s =
        TcpStream::connect(addr).await.map_err(|e| Unreachable(because(format!("cannot connect to {addr}"), &e)))?;
    s.set_nodelay(true).map_err(|e| Unreachable(chain(&e)))?;
    Ok(s)
}

async fn small_then_large(addr: SocketAddr) -> Result<(), VerifyError> {
    let mut s = connect(addr).await?;
    for (i, size) in [1, 64, 1000, 1 << 20].into_iter().enumerate() {
        round_trip(&mut s, size, i as u8).await?;
    }
    Ok(())
}

async fn several_connections(addr: SocketAddr) -> Result<(), VerifyError> {
    let mut conns = Vec::new();
    for _ in 0..8 {
        conns.push(connect(addr).await?);
    }
    // Interleaved: each connection's answer must be its own.
    for round in 0..4u8 {
        let tasks: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, mut s)| {
                tokio::spawn(async move { round_trip(&mut s, 64, round * 8 + i as u8).await.map(|()| s) })
            })
            .collect();
        conns = Vec::new();
        for task in tasks {
            // A task that panicked or was cancelled: its connection's echo is not had.
            conns.push(task.await.map_err(|e| Unreachable(because("a connection's task", &e)))??);
        }
    }
    Ok(())
}

async fn through_the_engine(addr: SocketAddr) -> Result<(), VerifyError> {
    let endpoint =
        Endpoint::new(&addr.ip().to_string(), addr.port(), vec![addr], None).map_err(|e| BadInput(e.to_string()))?;
    let raw = Raw::new(endpoint, 64);
    let Ok(mut conn) = raw.connect(0).await.map(|c| c.conn) else {
        return Err(Unreachable("the engine could not connect".into()));
    };
    for _ in 0..10 {
        let reply = raw.call(&mut conn).await;
        if reply.outcome != CallOutcome::Ok {
            return Err(Contract(format!("the engine's raw:// call failed: {:?}", reply.outcome)));
        }
    }
    Ok(())
}

/// The echo's checks, each bounded in time.
pub(crate) async fn check_echo(addr: SocketAddr) -> Vec<Outcome> {
    let mut out = Vec::new();
    type Check = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), VerifyError>> + Send>>;
    let checks: [(&str, Check); 3] = [
        ("echo-1-byte-to-1-mib", Box::pin(small_then_large(addr))),
        ("echo-8-connections-interleaved", Box::pin(several_connections(addr))),
        ("echo-through-the-engine", Box::pin(through_the_engine(addr))),
    ];
    for (name, check) in checks {
        let failure = match tokio::time::timeout(LIMIT, check).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some(format!("no whole echo within {LIMIT:?}")),
        };
        out.push(Outcome { name: name.into(), class: "ok".into(), failure });
    }
    out
}

/// Ready: a connection that echoes 8 bytes.
pub(crate) async fn healthy(addr: SocketAddr) -> bool {
    let Ok(Ok(mut s)) = tokio::time::timeout(Duration::from_secs(2), connect(addr)).await else { return false };
    matches!(tokio::time::timeout(Duration::from_secs(2), round_trip(&mut s, 8, 0)).await, Ok(Ok(())))
}
