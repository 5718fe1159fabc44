//! The REST vectors over HTTP/3: verify's own client on h3 and quinn (not the load engine's
//! target), one QUIC connection per vector, the body sent as the vector has it (an NDJSON upload
//! one DATA frame per line, as it arrives over a chunked HTTP/1.1 body).

use crate::body::rest_pieces;
use crate::check::{judge_rest, rest_request};
use crate::error::{because, chain};
use crate::VerifyError::{self, BadInput, Unreachable};
use bytes::{Buf, Bytes};
use callbench_contract::vectors::{Body, RestCase};
use callbench_engine::net::tls;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A call taking longer fails the vector.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// Sends one REST vector to the HTTP/3 server at `addr` (UDP) and judges the answer.
pub(crate) async fn check_rest(addr: SocketAddr, case: &RestCase) -> Result<(), VerifyError> {
    let answer = tokio::time::timeout(CALL_LIMIT, call(addr, case))
        .await
        .map_err(|_| Unreachable(format!("no answer over HTTP/3 in {CALL_LIMIT:?}")))??;
    judge_rest(case, answer.status, &answer.content_type, &answer.body)
}

struct Answer {
    status: u16,
    content_type: String,
    body: Vec<u8>,
}

/// The answer to one call: a vector that cannot be sent is [`VerifyError::BadInput`]; a QUIC client
/// that cannot be set up, a connection or stream that fails, [`VerifyError::Unreachable`].
async fn call(addr: SocketAddr, case: &RestCase) -> Result<Answer, VerifyError> {
    let (headers, body) = rest_request(case)?;
    let pieces = match &case.body {
        Some(ndjson @ Body::Ndjson(_)) => rest_pieces(ndjson)?,
        _ if body.is_empty() => vec![],
        _ => vec![body],
    };
    let tls = tls::client_config(&tls::TlsOptions { insecure: true, ..Default::default() }, &[b"h3"])
        .map_err(|e| Unreachable(e.to_string()))?;
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(tls))
        .map_err(|e| Unreachable(format!("QUIC client set-up: {e}")))?;
    let any: SocketAddr = if addr.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" }.parse().expect("a socket address");
    let mut endpoint = quinn::Endpoint::client(any).map_err(|e| Unreachable(because("a UDP socket for QUIC", &e)))?;
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let connecting = endpoint.connect(addr, "localhost").map_err(|e| Unreachable(chain(&e)))?;
    let quic = connecting.await.map_err(|e| Unreachable(because(format!("QUIC handshake with {addr}"), &e)))?;
    let (mut driver, mut send) =
        h3::client::new(h3_quinn::Connection::new(quic.clone())).await.map_err(|e| Unreachable(chain(&e)))?;
    let driving = tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });

    let mut request = http::Request::builder().method(case.method.as_str()).uri(format!("https://{addr}{}", case.path));
    for (name, value) in &headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if !matches!(case.body, Some(Body::Ndjson(_))) && !pieces.is_empty() {
        let length: usize = pieces.iter().map(Bytes::len).sum();
        request = request.header("content-length", length);
    }
    let request = request.body(()).map_err(|e| BadInput(chain(&e)))?;
    let mut stream = send.send_request(request).await.map_err(|e| Unreachable(chain(&e)))?;
    let sent = async {
        for piece in pieces {
            stream.send_data(piece).await?;
        }
        stream.finish().await
    };
    // A server that answers before reading all of the request (a 413) may stop it with
    // H3_NO_ERROR; its answer must still be read (RFC 9114 §4.1).
    if let Err(e) = sent.await {
        if !callbench_engine::http3::stopped_cleanly(&e) {
            return Err(Unreachable(chain(&e)));
        }
    }
    let response = stream.recv_response().await.map_err(|e| Unreachable(chain(&e)))?;
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut body = Vec::new();
    while let Some(mut chunk) = stream.recv_data().await.map_err(|e| Unreachable(chain(&e)))? {
        while chunk.has_remaining() {
            let piece = chunk.chunk();
            body.extend_from_slice(piece);
            let n = piece.len();
            chunk.advance(n);
        }
    }
    quic.close(0u32.into(), b"done");
    driving.abort();
    endpoint.wait_idle().await;
    Ok(Answer { status: response.status().as_u16(), content_type, body })
}
