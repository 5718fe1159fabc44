//! Clients that cost a server without asking it anything: connections opened and left idle,
//! requests dripped one byte at a time that never end (slowloris), and connections half-closed
//! right after a request. While they are held open the server must go on answering valid calls
//! on connections of their own; the caller also watches its memory across rounds.

use callbench_launcher::manifest::Protocol;
use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

/// How many of each are held in a round.
pub const IDLE: usize = 200;
pub const DRIPPING: usize = 20;
pub const HALF_CLOSED: usize = 20;
/// A dripping client's pace: a byte every 100 ms, as slowloris sends.
const DRIP_EVERY: Duration = Duration::from_millis(100);
/// The least time every connection is held, however fast the valid calls go.
const LEAST_HOLD: Duration = Duration::from_secs(2);
/// Connecting gives up after this: a server that stops accepting has failed already.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What one round held.
#[derive(Debug, Default, Clone)]
pub struct Held {
    pub idle: usize,
    pub dripping: usize,
    pub half_closed: usize,
    /// Connections the server did not accept (or reset before we were done opening them).
    pub refused: usize,
    pub held_for: Duration,
}

/// The bytes a request starts with, dripped forever after: an HTTP/1.1 head whose last header
/// never ends, or the HTTP/2 client preface (gRPC).
fn endless_start(protocol: Protocol) -> &'static [u8] {
    match protocol {
        Protocol::Rest => b"GET /health HTTP/1.1\r\nhost: callbench\r\nx-slow: ",
        Protocol::Grpc => b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        Protocol::Raw => b"callbench drips these bytes to an echo",
    }
}

/// A whole request, sent before the client closes its side: a GET, or the HTTP/2 preface with
/// an empty SETTINGS frame (the server answers with its SETTINGS).
fn whole_request(protocol: Protocol) -> &'static [u8] {
    match protocol {
        Protocol::Rest => b"GET /health HTTP/1.1\r\nhost: callbench\r\n\r\n",
        Protocol::Grpc => b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
        Protocol::Raw => b"ping",
    }
}

async fn connect(addr: SocketAddr) -> Option<TcpStream> {
    tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await.ok()?.ok()
}

/// Holds the slow clients open against `addr` while `during` runs (and for at least
/// `LEAST_HOLD`), then closes them all; gives what was held and what `during` gave.
pub(crate) async fn hold<F: Future>(protocol: Protocol, addr: SocketAddr, during: F) -> (Held, F::Output) {
    let started = Instant::now();
    let mut held = Held::default();
    let mut kept = Vec::new();
    for _ in 0..IDLE {
        match connect(addr).await {
            Some(s) => {
                kept.push(s);
                held.idle += 1;
            }
            None => held.refused += 1,
        }
    }
    for _ in 0..HALF_CLOSED {
        match connect(addr).await {
            Some(mut s) => {
                // Unread answers stay in the socket: this client never reads.
                if s.write_all(whole_request(protocol)).await.is_ok() && s.shutdown().await.is_ok() {
                    held.half_closed += 1;
                } else {
                    held.refused += 1;
                }
                kept.push(s);
            }
            None => held.refused += 1,
        }
    }
    let (stop, stopped) = watch::channel(false);
    let mut drips = Vec::new();
    for _ in 0..DRIPPING {
        let Some(stream) = connect(addr).await else {
            held.refused += 1;
            continue;
        };
        held.dripping += 1;
        drips.push(tokio::spawn(drip(stream, endless_start(protocol), stopped.clone())));
    }
    let output = during.await;
    let rest = LEAST_HOLD.saturating_sub(started.elapsed());
    tokio::time::sleep(rest).await;
    held.held_for = started.elapsed();
    let _ = stop.send(true);
    for d in drips {
        let _ = d.await;
    }
    drop(kept);
    (held, output)
}

/// Sends `start` a byte at a time, then one more `a` every `DRIP_EVERY`, until stopped or the
/// server closes.
async fn drip(mut stream: TcpStream, start: &'static [u8], mut stopped: watch::Receiver<bool>) {
    let mut i = 0usize;
    loop {
        let byte = start.get(i).copied().unwrap_or(b'a');
        if stream.write_all(&[byte]).await.is_err() {
            return; // the server gave up on us: allowed
        }
        i += 1;
        tokio::select! {
            _ = tokio::time::sleep(DRIP_EVERY) => {}
            _ = stopped.changed() => return,
        }
    }
}
