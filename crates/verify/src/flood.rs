//! The bad-input flood: thousands of mixed bad requests over keep-alive
//! connections. The caller then checks the server is alive, its memory did not
//! keep growing, and valid calls are still answered correctly.

use super::check::{grpc_request, rest_request};
use super::grpc::GrpcConn;
use super::http1::Http1Conn;
use anyhow::Result;
use bytes::Bytes;
use callbench_contract::vectors::{self, Body};
use callbench_servers::manifest::Protocol;
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
    Grpc { path: String, content_type: String, message: Bytes },
}

/// Oversized bodies are sent once in this many requests, to keep the flood quick.
const OVERSIZED_EVERY: usize = 250;

/// Sends `requests` bad requests over `connections` keep-alive connections.
pub async fn flood(protocol: Protocol, addr: SocketAddr, requests: usize, connections: usize) -> Result<FloodStats> {
    let (small, oversized) = bad_requests(protocol)?;
    let small = Arc::new(small);
    let oversized = Arc::new(oversized);
    let started = Instant::now();
    let connections = connections.max(1);
    let mut tasks = Vec::new();
    for worker in 0..connections {
        let (small, oversized) = (small.clone(), oversized.clone());
        let share = requests / connections + usize::from(worker < requests % connections);
        tasks.push(tokio::spawn(async move { worker_loop(protocol, addr, worker, share, &small, &oversized).await }));
    }
    let mut stats = FloodStats::default();
    for task in tasks {
        let s = task.await??;
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
    oversized: &[BadRequest],
) -> Result<FloodStats> {
    let mut stats = FloodStats::default();
    let mut conn = Conn::open(protocol, addr).await?;
    for i in 0..count {
        let n = i * 7 + worker; // spread the kinds of bad input over the connections
        let request = match oversized.is_empty() || !n.is_multiple_of(OVERSIZED_EVERY) {
            true => &small[n % small.len()],
            false => &oversized[n / OVERSIZED_EVERY % oversized.len()],
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
    async fn open(protocol: Protocol, addr: SocketAddr) -> Result<Conn> {
        Ok(match protocol {
            Protocol::Rest => Conn::Rest(Http1Conn::connect(addr).await?),
            Protocol::Grpc => Conn::Grpc(GrpcConn::connect(addr).await?),
            Protocol::Raw => anyhow::bail!("an echo has no bad input to flood it with"),
        })
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Rest(c) => c.is_open(),
            Conn::Grpc(c) => c.is_open(),
        }
    }

    async fn send(&mut self, request: &BadRequest) -> Result<()> {
        match (self, request) {
            (Conn::Rest(c), BadRequest::Rest { method, path, headers, body }) => {
                c.send(method, path, headers, body.clone()).await.map(|_| ())
            }
            (Conn::Grpc(c), BadRequest::Grpc { path, content_type, message }) => {
                c.call(path, content_type, message).await.map(|_| ())
            }
            _ => unreachable!("requests are built for the connection's protocol"),
        }
    }
}

/// The bad-input vectors of `protocol`: (small ones, oversized ones).
fn bad_requests(protocol: Protocol) -> Result<(Vec<BadRequest>, Vec<BadRequest>)> {
    let (mut small, mut oversized) = (Vec::new(), Vec::new());
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
                    let (path, content_type, message) = grpc_request(grpc)?;
                    (BadRequest::Grpc { path, content_type, message }, matches!(grpc.request, Body::Fill(_)))
                }
                _ => continue,
            };
            if is_fill {
                oversized.push(request)
            } else {
                small.push(request)
            }
        }
    }
    anyhow::ensure!(!small.is_empty(), "the vectors hold no bad input for {protocol}");
    Ok((small, oversized))
}
