//! The HTTP/3 target (QUIC, always TLS 1.3) for REST calls: every call is a request stream on a
//! connection of the pool ([`crate::h3pool`]), as HTTP/2's calls are streams.

use crate::call_data::{CallData, Prepared};
use crate::h3pool::{H3Handle, H3Pool};
use crate::http2::{header_name, header_value};
use crate::net::failures::ConnectFailures;
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{Expect, HttpRequest};
use crate::target::{Connected, QuicCounts, Reply, Target, WireTotals};
use crate::EngineError;
use bytes::{Buf, Bytes};

pub struct Http3 {
    pool: H3Pool,
    requests: Prepared<H3Request>,
    expect: Expect,
}

/// A request's head (`:authority` from the URI) and body, made once (or per call, when made per call).
struct H3Request {
    head: http::Request<()>,
    body: Bytes,
}

impl H3Request {
    fn head(&self) -> http::Request<()> {
        let mut request = http::Request::new(());
        *request.method_mut() = self.head.method().clone();
        *request.uri_mut() = self.head.uri().clone();
        *request.headers_mut() = self.head.headers().clone();
        request
    }
}

/// `request` as HTTP/3 sends it to `authority` (its `Host` unless the request has one).
fn encode(request: &HttpRequest, authority: &str) -> Result<H3Request, String> {
    let authority = request.authority(authority.to_string());
    let uri: http::Uri = format!("https://{authority}{}", request.path)
        .parse()
        .map_err(|e| format!("bad request path {:?}: {e}", request.path))?;
    let method = http::Method::from_bytes(request.method.as_bytes())
        .map_err(|_| format!("bad HTTP method {:?}", request.method))?;
    let body = request.wire_body();
    let mut head = http::Request::builder().method(method).uri(uri).body(()).map_err(|e| e.to_string())?;
    let implied = request.implied_headers().into_iter().map(|(n, v)| (n.to_string(), v.to_string()));
    for (name, value) in request.headers.iter().cloned().chain(implied) {
        if ["host", "connection", "transfer-encoding"].iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue; // Host becomes :authority; HTTP/3 forbids connection headers
        }
        head.headers_mut().append(header_name(&name)?, header_value(&name, &value)?);
    }
    if !body.is_empty() && !request.has_header("content-length") {
        head.headers_mut().insert(http::header::CONTENT_LENGTH, body.len().into());
    }
    Ok(H3Request { head, body })
}

impl Http3 {
    /// `authority`: `host:port` as the request's `:authority`, unless the request has a `Host` header.
    pub fn new(pool: H3Pool, authority: &str, request: &HttpRequest, expect: Expect) -> Result<Self, EngineError> {
        Self::with_data(pool, authority, CallData::One(request.clone()), expect)
    }

    /// A target whose calls send `data`'s requests (in turn, or made per call).
    pub fn with_data(
        pool: H3Pool,
        authority: &str,
        data: CallData<HttpRequest>,
        expect: Expect,
    ) -> Result<Self, EngineError> {
        let authority = authority.to_string();
        let requests =
            Prepared::new(data, move |request| encode(request, &authority)).map_err(EngineError::Settings)?;
        Ok(Http3 { pool, requests, expect })
    }

    /// The request and its final answer on one stream: the status, gzip named or not, the body's
    /// bytes, and whether the DATA added up to the answer's `content-length` (RFC 9114 §4.1.2: not for a
    /// HEAD request's answer, a 204 or a 304).
    async fn exchange(
        &self,
        request: &H3Request,
        conn: &mut H3Handle,
        bytes: &mut ByteCounts,
        body: &mut Vec<u8>,
    ) -> Result<(u16, bool, bool), h3::error::StreamError> {
        let keep = self.expect.body.is_some();
        // Boxed: h3's send_request future is the largest state of this exchange, and every HTTP/3
        // caller's task is as large as the largest state it may hold: one allocation a call instead
        // (bench/results/h3-caller-size-2026-12-07.md).
        let mut stream = Box::pin(conn.send.send_request(request.head())).await?;
        let sent = async {
            if !request.body.is_empty() {
                stream.send_data(request.body.clone()).await?;
            }
            stream.finish().await
        };
        // A server that answers before reading all of the request (a 413) may stop it with
        // H3_NO_ERROR; its answer still comes (RFC 9114 §4.1).
        if let Err(e) = sent.await {
            if !stopped_cleanly(&e) {
                return Err(e);
            }
        }
        let mut answer = stream.recv_response().await?;
        // Interim answers (100 Continue, 103 Early Hints) come before the final one (RFC 9114 §4.1).
        while answer.status().is_informational() {
            answer = stream.recv_response().await?;
        }
        let gzip = answer.headers().get(http::header::CONTENT_ENCODING).is_some_and(|v| v == "gzip");
        let bodiless = request.head.method() == http::Method::HEAD || matches!(answer.status().as_u16(), 204 | 304);
        // Some(None): a content-length that is no number.
        let declared = answer
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .filter(|_| !bodiless)
            .map(|v| v.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok()));
        while let Some(mut chunk) = stream.recv_data().await? {
            while chunk.has_remaining() {
                let piece = chunk.chunk();
                bytes.received += piece.len() as u64;
                if keep && body.len() <= crate::limits::MAX_KEPT_BODY {
                    body.extend_from_slice(piece);
                }
                let n = piece.len();
                chunk.advance(n);
            }
        }
        let whole = match declared {
            None => true,
            Some(length) => length == Some(bytes.received),
        };
        Ok((answer.status().as_u16(), gzip, whole))
    }
}

/// Whether the peer stopped the stream with H3_NO_ERROR (STOP_SENDING or reset): done with it, not failed.
pub fn stopped_cleanly(e: &h3::error::StreamError) -> bool {
    match e {
        h3::error::StreamError::RemoteTerminate { code, .. } => *code == h3::error::Code::H3_NO_ERROR,
        e => e.is_h3_no_error(),
    }
}

/// Whether the server refused the request before processing it (H3_REQUEST_REJECTED, or a stream
/// after its GOAWAY): safe to send again.
fn unprocessed(e: &h3::error::StreamError) -> bool {
    match e {
        h3::error::StreamError::RemoteTerminate { code, .. } => *code == h3::error::Code::H3_REQUEST_REJECTED,
        h3::error::StreamError::RemoteClosing { .. } => true,
        _ => false,
    }
}

impl Target for Http3 {
    type Conn = H3Handle;

    async fn connect(&self, slot: usize) -> Result<Connected<H3Handle>, ErrorKind> {
        self.pool.get(slot).await
    }

    async fn call(&self, conn: &mut H3Handle) -> Reply {
        let request = match self.requests.pick() {
            Ok(request) => request,
            Err(_) => return Reply::error(ErrorKind::Validation, ByteCounts::default()),
        };
        let mut bytes = ByteCounts { sent: request.body.len() as u64, received: 0 };
        let mut body = Vec::new();
        let (status, gzip) = match self.exchange(&request, conn, &mut bytes, &mut body).await {
            // DATA short of (or beyond) its content-length, or a content-length that is no number: malformed.
            Ok((_, _, false)) => return Reply::error(ErrorKind::Protocol, bytes),
            Ok((status, gzip, true)) => (status, gzip),
            Err(e) if unprocessed(&e) => return Reply::unprocessed(bytes, conn.is_usable()),
            // Sent in 0-RTT that the server refused: never processed, sent again on a new connection.
            Err(_) if conn.early_data_rejected().await => return Reply::unprocessed(bytes, false),
            Err(_) if conn.is_usable() => return Reply::error(ErrorKind::Protocol, bytes),
            Err(_) => return Reply::broken(ErrorKind::Io, bytes),
        };
        if !self.expect.status_ok(status) {
            return Reply::error(ErrorKind::HttpStatus(status), bytes);
        }
        if body.len() > crate::limits::MAX_KEPT_BODY {
            return Reply::error(ErrorKind::Protocol, bytes);
        }
        match self.expect.judge_body(body, gzip) {
            Some(failed) => Reply::error(failed, bytes),
            None => Reply::ok(bytes),
        }
    }

    fn varies(&self) -> bool {
        self.requests.varies()
    }

    fn reusable(&self, conn: &mut H3Handle) -> bool {
        conn.is_usable()
    }

    fn wire(&self) -> WireTotals {
        self.pool.wire()
    }

    fn quic(&self) -> Option<QuicCounts> {
        Some(self.pool.quic())
    }

    fn connect_failures(&self) -> ConnectFailures {
        self.pool.connect_failures()
    }
}
