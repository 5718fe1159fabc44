//! Readiness: a server is ready when its health endpoint says SERVING.

use super::{grpc::GrpcConn, http1::Http1Conn};
use crate::VerifyError;
use bytes::Bytes;
use callbench_launcher::manifest::Protocol;
use callbench_launcher::process::ServerProcess;
use callbench_primitives::boxed::Boxed;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// One health check: REST `GET /health` → 200, gRPC `grpc.health.v1.Health/Check` → SERVING.
pub(crate) async fn healthy(protocol: Protocol, addr: SocketAddr) -> bool {
    match protocol {
        Protocol::Rest => match Http1Conn::connect(addr).await {
            Ok(mut conn) => conn.send("GET", "/health", &[], Bytes::new()).await.is_ok_and(|r| r.status == 200),
            Err(_) => false,
        },
        Protocol::Grpc => match GrpcConn::connect(addr).await {
            // HealthCheckRequest{} is empty; HealthCheckResponse{status: SERVING} is 08 01.
            Ok(mut conn) => conn
                .call("/grpc.health.v1.Health/Check", "application/grpc", &[])
                .await
                .is_ok_and(|r| r.code == Some(0) && r.body.as_deref() == Some(&[8, 1])),
            Err(_) => false,
        },
        Protocol::Raw => crate::echo::healthy(addr).await,
    }
}

/// The pauses between polls double from 2 ms to 50 ms: a compiled server answers within a few
/// milliseconds of its start, and one that takes seconds (a JVM) is not polled more than 20 times a
/// second.
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// Sleeps `pause`; gives the next one.
async fn next_pause(pause: Duration) -> Duration {
    tokio::time::sleep(pause).await;
    (pause * 2).min(LONGEST_PAUSE)
}

/// Polls the health endpoint until it answers, the process dies, or `timeout` passes.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn wait_ready(
    server: &mut ServerProcess,
    protocol: Protocol,
    timeout: Duration,
) -> Boxed<'_, Result<(), VerifyError>> {
    Box::pin(wait_ready_here(server, protocol, timeout))
}

async fn wait_ready_here(server: &mut ServerProcess, protocol: Protocol, timeout: Duration) -> Result<(), VerifyError> {
    let deadline = Instant::now() + timeout;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(status) = server.exited() {
            return Err(exited(server, status));
        }
        if healthy(protocol, server.addr).await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let tail = server.output_tail();
            return Err(VerifyError::NotReady(format!(
                "{} was not ready within {:?}; its last output:\n{tail}",
                server.name, timeout
            )));
        }
        pause = next_pause(pause).await;
    }
}

/// Polls until the server accepts a TCP connection (a user's server has no health endpoint of
/// ours), the process dies, or `timeout` passes.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn wait_accepting(server: &mut ServerProcess, timeout: Duration) -> Boxed<'_, Result<(), VerifyError>> {
    Box::pin(wait_accepting_here(server, timeout))
}

async fn wait_accepting_here(server: &mut ServerProcess, timeout: Duration) -> Result<(), VerifyError> {
    let deadline = Instant::now() + timeout;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(status) = server.exited() {
            return Err(exited(server, status));
        }
        let left = deadline.saturating_duration_since(Instant::now()).min(Duration::from_secs(1));
        if let Ok(Ok(_)) = tokio::time::timeout(left, tokio::net::TcpStream::connect(server.addr)).await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(VerifyError::NotReady(format!(
                "{} did not accept a connection at {} within {:?}; its last output:\n{}",
                server.name,
                server.addr,
                timeout,
                server.output_tail()
            )));
        }
        pause = next_pause(pause).await;
    }
}

fn exited(server: &ServerProcess, status: std::process::ExitStatus) -> VerifyError {
    VerifyError::NotReady(format!(
        "{} exited during start-up ({status}); its last output:\n{}",
        server.name,
        server.output_tail()
    ))
}
