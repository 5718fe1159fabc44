//! The bad-input flood: thousands of mixed bad requests over keep-alive
//! connections. The caller then checks the server is alive, its memory did not
//! keep growing, and valid calls are still answered correctly.

use super::check::{grpc_request, rest_request};
use super::grpc::GrpcConn;
use super::http1::Http1Conn;
use crate::error::chain;
use crate::VerifyError::{self, BadInput, Unreachable};
use bytes::Bytes;
use callbench_contract::vectors::{self, Body};
use callbench_launcher::manifest::Protocol;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
pub struct FloodStats {
    pub requests: usize,
    /// Connections opened after the server closed one (e.g. after a 413).
    pub reconnects: usize,
    /// Requests that got no answer (the connection dropped mid-request).
    pub unanswered: usize,
    pub elapsed: Duration,
}

/// One bad request, ready to send.
enum BadRequest {
    Rest { method: String, path: String, headers: Vec<(String, String)>, body: Bytes },
    Grpc { path: String, content_type: String, messages: Vec<Bytes> },
}

/// Oversized bodies and heavy vectors (refused after the workload ran: a Python server takes half a
/// second for the population limit) are sent once in this many requests, to keep the flood quick.
pub const RARE_EVERY: usize = 250;

/// Sends `requests` bad requests over `connections` keep-alive connections.
pub(crate) async fn flood(
    protocol: Protocol,
    addr: SocketAddr,
    requests: usize,
    connections: usize,
) -> Result<FloodStats, VerifyError> {
    let (small, rare) = bad_requests(protocol)?;
    let small = Arc::new(small);
    let rare = Arc::new(rare);
    let started = Instant::now();
    let connections = connections.max(1);
    let mut tasks = Vec::new();
    for worker in 0..connections {
        let (small, rare) = (small.clone(), rare.clone());
        let share = requests / connections + usize::from(worker < requests % connections);
        tasks.push(tokio::spawn(async move { worker_loop(protocol, addr, worker, share, &small, &rare).await }));
    }
    let mut stats = FloodStats::default();
    for task in tasks {
        // A worker that panicked or was cancelled: its connections are not had.
        let s = task.await.map_err(|e| Unreachable(chain(&e)))??;
        stats.requests += s.requests;
        stats.reconnects += s.reconnects;
        stats.unanswered += s.unanswered;
    }
    stats.elapsed = started.elapsed();
    Ok(stats)
}

async fn worker_loop(
    protocol: Protocol,
    addr: SocketAddr,
    worker: usize,
    count: usize,
    small: &[BadRequest],
    rare: &[BadRequest],
) -> Result<FloodStats, VerifyError> {
    let mut stats = FloodStats::default();
    let mut conn = Conn::open(protocol, addr).await?;
    for i in 0..count {
        let n = i * 7 + worker; // spread the kinds of bad input over the connections
        let request = match rare.is_empty() || !n.is_multiple_of(RARE_EVERY) {
            true => &small[n % small.len()],
            false => &rare[n / RARE_EVERY % rare.len()],
        };
        if !conn.is_open() {
            conn = Conn::open(protocol, addr).await?;
            stats.reconnects += 1;
        }
        if conn.send(request).await.is_err() {
            stats.unanswered += 1;
        }
        stats.requests += 1;
    }
    Ok(stats)
}

enum Conn {
    Rest(Http1Conn),
    Grpc(GrpcConn),
}

impl Conn {
    async fn open(protocol: Protocol, addr: SocketAddr) -> Result<Conn, VerifyError> {
        Ok(match protocol {
            Protocol::Rest => Conn::Rest(Http1Conn::connect(addr).await?),
            Protocol::Grpc => Conn::Grpc(GrpcConn::connect(addr).await?),
            Protocol::Raw => return Err(BadInput("an echo has no bad input to flood it with".into())),
        })
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Rest(c) => c.is_open(),
            Conn::Grpc(c) => c.is_open(),
        }
    }

    async fn send(&mut self, request: &BadRequest) -> Result<(), VerifyError> {
        match (self, request) {
            (Conn::Rest(c), BadRequest::Rest { method, path, headers, body }) => {
                c.send(method, path, headers, body.clone()).await.map(|_| ())
            }
            (Conn::Grpc(c), BadRequest::Grpc { path, content_type, messages }) => {
                c.call_stream(path, content_type, messages).await.map(|_| ())
            }
            _ => unreachable!("requests are built for the connection's protocol"),
        }
    }
}

/// The bad-input vectors of `protocol`: (small ones, rare ones: oversized or heavy).
fn bad_requests(protocol: Protocol) -> Result<(Vec<BadRequest>, Vec<BadRequest>), VerifyError> {
    let (mut small, mut rare) = (Vec::new(), Vec::new());
    for file in vectors::all() {
        for v in file.vectors.iter().filter(|v| v.class != "ok") {
            let (request, is_fill) = match (protocol, &v.rest, &v.grpc) {
                (Protocol::Rest, Some(rest), _) => {
                    let (headers, body) = rest_request(rest)?;
                    let request =
                        BadRequest::Rest { method: rest.method.clone(), path: rest.path.clone(), headers, body };
                    (request, matches!(rest.body, Some(Body::Fill(_))))
                }
                (Protocol::Grpc, _, Some(grpc)) => {
                    let (path, content_type, messages) = grpc_request(grpc)?;
                    let is_fill = grpc.bodies().iter().any(|b| matches!(b, Body::Fill(_)));
                    (BadRequest::Grpc { path, content_type, messages }, is_fill)
                }
                _ => continue,
            };
            if is_fill || v.heavy {
                rare.push(request)
            } else {
                small.push(request)
            }
        }
    }
    if small.is_empty() {
        return Err(BadInput(format!("the vectors hold no bad input for {protocol}")));
    }
    Ok((small, rare))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The population limit (refused after 31 generations) goes with the oversized bodies, for both protocols.
    #[test]
    fn heavy_and_oversized_inputs_are_the_rare_ones() {
        for protocol in [Protocol::Rest, Protocol::Grpc] {
            let (small, rare) = bad_requests(protocol).unwrap();
            let heavy = |r: &BadRequest| match r {
                BadRequest::Rest { body, .. } => body.starts_with(b"{\"ntimes\":32,"),
                BadRequest::Grpc { path, messages, .. } => {
                    path.ends_with("Life/Step") && messages[0].starts_with(&[8, 32])
                }
            };
            assert_eq!(rare.iter().filter(|r| heavy(r)).count(), 1, "{protocol}");
            assert!(!small.iter().any(heavy), "{protocol}");
            assert!(rare.len() > 1 && small.len() > 20, "{protocol}: {} rare, {} small", rare.len(), small.len());
        }
    }
}
