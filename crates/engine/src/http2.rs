//! The HTTP/2 target (h2c with prior knowledge, or ALPN h2 over TLS) for REST calls.

use crate::call_data::{CallData, Prepared};
use crate::h2client::{Answer, H2Error};
use crate::h2pool::{request_block, H2Handle, H2Pool, RequestBlocks};
use crate::net::failures::ConnectFailures;
use crate::net::Endpoint;
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{Expect, HttpRequest};
use crate::target::{Connected, Reply, Target, WireTotals};
use crate::EngineError;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};

pub struct Http2 {
    pool: H2Pool,
    requests: Prepared<H2Request>,
    expect: Expect,
}

/// A request's HPACK header blocks and its body, made once (or per call, when made per call).
struct H2Request {
    block: RequestBlocks,
    body: Bytes,
}

impl Http2 {
    pub fn new(
        endpoint: Endpoint,
        connections: usize,
        fresh_each_call: bool,
        request: &HttpRequest,
        expect: Expect,
    ) -> Result<Self, EngineError> {
        Self::with_data(endpoint, connections, fresh_each_call, CallData::One(request.clone()), expect)
    }

    /// A target whose calls send `data`'s requests (in turn, or made per call).
    pub fn with_data(
        endpoint: Endpoint,
        connections: usize,
        fresh_each_call: bool,
        data: CallData<HttpRequest>,
        expect: Expect,
    ) -> Result<Self, EngineError> {
        let (authority, tls) = (endpoint.authority(), endpoint.is_tls());
        let requests =
            Prepared::new(data, move |request| encode(request, &authority, tls)).map_err(EngineError::Settings)?;
        Ok(Http2 { pool: H2Pool::new(endpoint, connections, fresh_each_call), requests, expect })
    }
}

/// `request` as HTTP/2 sends it to `authority` (its `Host` unless the request has one).
fn encode(request: &HttpRequest, authority: &str, tls: bool) -> Result<H2Request, String> {
    let path: http::uri::PathAndQuery =
        request.path.parse().map_err(|e| format!("bad request path {:?}: {e}", request.path))?;
    Method::from_bytes(request.method.as_bytes()).map_err(|_| format!("bad HTTP method {:?}", request.method))?;
    let body = request.wire_body();
    let implied = request.implied_headers().into_iter().map(|(n, v)| (n.to_string(), v.to_string()));
    let mut headers = vec![];
    for (name, value) in request.headers.iter().cloned().chain(implied) {
        if name.eq_ignore_ascii_case("host") || name.eq_ignore_ascii_case("connection") {
            continue; // Host becomes :authority; HTTP/2 forbids connection headers
        }
        header_name(&name)?;
        header_value(&name, &value)?;
        headers.push((name, value));
    }
    if !body.is_empty() && !request.has_header("content-length") {
        headers.push(("content-length".into(), body.len().to_string()));
    }
    let authority = request.authority(authority.to_string());
    header_value("host", &authority)?;
    let block = request_block(&request.method, tls, &authority, path.as_str(), &headers);
    Ok(H2Request { block, body })
}

/// A header's name as HTTP/2 sends it: an error ([`EngineError::Settings`]) if it is not one.
pub fn header_name(name: &str) -> Result<HeaderName, EngineError> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| EngineError::Settings(format!("bad header name {name:?}")))
}

/// A header's value as HTTP/2 sends it: an error ([`EngineError::Settings`]) if it is not one.
pub fn header_value(name: &str, value: &str) -> Result<HeaderValue, EngineError> {
    HeaderValue::from_str(value).map_err(|_| EngineError::Settings(format!("bad value for header {name}: {value:?}")))
}

/// An answer whose body is kept for a check (at most [`crate::limits::MAX_KEPT_BODY`] bytes).
struct Kept {
    answer: Result<Answer, H2Error>,
    body: Vec<u8>,
    too_large: bool,
    received: u64,
}

async fn kept_body(conn: &H2Handle, request: &H2Request) -> Kept {
    let (mut body, mut too_large, mut received) = (Vec::new(), false, 0);
    let answer = conn
        .exchange(&request.block, &request.body, |chunk| {
            received += chunk.len() as u64;
            too_large |= body.len() + chunk.len() > crate::limits::MAX_KEPT_BODY;
            if !too_large {
                body.extend_from_slice(chunk);
            }
        })
        .await;
    Kept { answer, body, too_large, received }
}

impl Target for Http2 {
    type Conn = H2Handle;

    async fn connect(&self, slot: usize) -> Result<Connected<H2Handle>, ErrorKind> {
        self.pool.get(slot).await
    }

    async fn call(&self, conn: &mut H2Handle) -> Reply {
        let request = match self.requests.pick() {
            Ok(request) => request,
            Err(_) => return Reply::error(ErrorKind::Validation, ByteCounts::default()),
        };
        let mut bytes = ByteCounts { sent: request.body.len() as u64, received: 0 };
        let (answer, body, too_large) = if self.expect.body.is_some() {
            // Boxed: only a call whose body a check reads holds the larger future (and it copies
            // the body anyway); every caller's state would hold it inline.
            let kept = Box::pin(kept_body(conn, &request)).await;
            bytes.received = kept.received;
            (kept.answer, kept.body, kept.too_large)
        } else {
            // No check reads the body: counted as it arrives, never copied (a stream in flight
            // then holds no buffer for its answer).
            let (answer, received) = conn.count(&request.block, &request.body).await;
            bytes.received = received;
            (answer, Vec::new(), false)
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) if e.unprocessed() => return Reply::unprocessed(bytes, e.connection_survives()),
            Err(e) if e.connection_survives() => return Reply::error(e.error_kind(), bytes),
            Err(e) => return Reply::broken(e.error_kind(), bytes),
        };
        if !self.expect.status_ok(answer.status) {
            return Reply::error(ErrorKind::HttpStatus(answer.status), bytes);
        }
        if too_large {
            return Reply::error(ErrorKind::Protocol, bytes);
        }
        let gzip = answer.headers.get("content-encoding") == Some(b"gzip");
        match self.expect.judge_body(body, gzip) {
            Some(failed) => Reply::error(failed, bytes),
            None => Reply::ok(bytes),
        }
    }

    fn varies(&self) -> bool {
        self.requests.varies()
    }

    fn reusable(&self, conn: &mut H2Handle) -> bool {
        conn.is_usable()
    }

    fn wire(&self) -> WireTotals {
        self.pool.endpoint.wire()
    }

    fn connect_failures(&self) -> ConnectFailures {
        self.pool.endpoint.connect_failures()
    }

    fn goaways(&self) -> u64 {
        self.pool.goaways()
    }
}
