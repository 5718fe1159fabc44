//! The HTTP/1.1 target: each request serialised once (or per call, when made per call), written whole; answers parsed with
//! `httparse` in a buffer each connection reuses. Bodies are skipped unless a check needs them.
//! A keep-alive connection the server closed between calls is replaced before the next call is
//! written; a request it closed on before any answer byte was never processed (RFC 9112 §9.3.1):
//! sent again when nothing of it was written or its method is idempotent.

pub(crate) mod chunked;
mod framing;

use crate::call_data::{CallData, Prepared};
use crate::limits::MAX_KEPT_BODY;
use crate::net::failures::ConnectFailures;
use crate::net::{Endpoint, Stream};
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{Expect, HttpRequest};
use crate::target::{Connected, Reply, Target, WireTotals};
use crate::EngineError;
use bytes::{Buf, Bytes, BytesMut};
use framing::{Fields, Framing};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// An answer's head is refused beyond this size (as most servers refuse requests).
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;
/// Up to this much of a head, every read parses it again (a broken status line fails at once).
const REPARSE_ALWAYS: usize = 1024;
/// A connection reads into a buffer of this size at first: what an answer of a few kilobytes needs,
/// so ten thousand idle connections hold tens of megabytes, not hundreds.
const FIRST_READ: usize = 4 * 1024;
/// A read that fills all it was offered doubles the next one's size, up to this: large answers are
/// read in few system calls.
const MAX_READ: usize = 64 * 1024;

pub struct Http1 {
    endpoint: Endpoint,
    requests: Prepared<Wire>,
    expect: Expect,
}

/// A request as written on the socket, and what the call needs to know of it.
struct Wire {
    bytes: Bytes,
    payload_sent: u64,
    head_request: bool,
    /// RFC 9110 §9.2.2: a server that closed before answering may be sent it again.
    idempotent: bool,
}

/// `S` is the socket in a run; the fuzz targets read answers from memory through the same code.
pub struct Http1Conn<S = Stream> {
    stream: S,
    buf: BytesMut,
    /// Answers read on this connection: a closed connection that had none was refused, not reused.
    answered: u64,
    /// Whether the current call has read any byte of its answer.
    read_any: bool,
    /// How much the next read offers (FIRST_READ up to MAX_READ).
    read_size: usize,
}

impl<S> Http1Conn<S> {
    fn new(stream: S) -> Self {
        Http1Conn {
            stream,
            buf: BytesMut::with_capacity(FIRST_READ),
            answered: 0,
            read_any: false,
            read_size: FIRST_READ,
        }
    }
}

impl Http1 {
    /// `close_each`: ask the server to close after each answer (new-connection-per-call mode), so the
    /// server, not the client, holds the TIME_WAIT sockets.
    pub fn new(endpoint: Endpoint, request: &HttpRequest, expect: Expect, close_each: bool) -> Self {
        Self::with_data(endpoint, CallData::One(request.clone()), expect, close_each)
            .expect("one request always serialises")
    }

    /// A target whose calls send `data`'s requests (in turn, or made per call).
    pub fn with_data(
        endpoint: Endpoint,
        data: CallData<HttpRequest>,
        expect: Expect,
        close_each: bool,
    ) -> Result<Self, EngineError> {
        let authority = endpoint.authority();
        let requests = Prepared::new(data, move |request| Ok(serialise(request, &authority, close_each)))
            .map_err(EngineError::Settings)?;
        Ok(Http1 { endpoint, requests, expect })
    }

    /// The first request exactly as written on the socket.
    pub fn request_bytes(&self) -> Bytes {
        self.requests.first().map(|w| w.bytes.clone()).unwrap_or_default()
    }

    /// The answer a server sent before reading the whole request and closing (a 413 for an
    /// oversized body, RFC 9112 §9.6): still in the socket after the refused write, and the call's.
    async fn early_answer(
        &self,
        conn: &mut Http1Conn,
        refused: &std::io::Error,
        head_request: bool,
        keep_body: bool,
    ) -> Option<(Head, Vec<u8>, u64)> {
        if !matches!(refused.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset) {
            return None;
        }
        let (mut head, body, size) = conn.answer(head_request, keep_body).await.ok()?;
        head.close = true;
        Some((head, body, size))
    }
}

/// What the head of an answer said.
struct Head {
    len: usize,
    status: u16,
    framing: Framing,
    close: bool,
    gzip: bool,
}

fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ErrorKind> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Err(ErrorKind::Protocol),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ErrorKind::Protocol),
    };
    let status = response.code.unwrap_or(0);
    let mut close = response.version == Some(0);
    let (mut fields, mut gzip) = (Fields::default(), false);
    for h in response.headers.iter() {
        // Names first: most headers are none of these four, and need no value decoded.
        let value = || std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            fields.content_length(value())?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            fields.transfer_encoding(value());
        } else if h.name.eq_ignore_ascii_case("connection") {
            let value = value().to_ascii_lowercase();
            close = value.contains("close") || (close && !value.contains("keep-alive"));
        } else if h.name.eq_ignore_ascii_case("content-encoding") {
            gzip = value().eq_ignore_ascii_case("gzip");
        }
    }
    // Fields at odds fail even where the answer has no body: the server cannot be trusted to
    // frame the next answer either.
    let framing = fields.framing()?;
    let framing = if head_request || status < 200 || status == 204 || status == 304 {
        Framing::None
    } else {
        close |= framing == Framing::UntilClose;
        framing
    };
    Ok(Some(Head { len, status, framing, close, gzip }))
}

impl<S: AsyncRead + AsyncWrite + Unpin> Http1Conn<S> {
    /// Reads more into the buffer; false at end of stream.
    async fn fill(&mut self) -> Result<bool, ErrorKind> {
        if self.buf.capacity() - self.buf.len() < self.read_size / 2 {
            // Reuses the allocation when what it holds was read already (nearly always).
            self.buf.reserve(self.read_size);
        }
        let offered = self.buf.capacity() - self.buf.len();
        match self.stream.read_buf(&mut self.buf).await {
            Ok(0) => Ok(false),
            Ok(n) => {
                if n == offered {
                    self.read_size = (self.read_size * 2).min(MAX_READ);
                }
                self.read_any = true;
                Ok(true)
            }
            Err(_) => Err(ErrorKind::Io),
        }
    }

    /// Writes (and flushes) the request, watching for an answer whenever the socket is full: a server may answer
    /// and stop reading before a large body's end (RFC 9112 §9.6), and a client that only wrote
    /// would then wait on the full socket for ever. True when all was written; false when the
    /// answer began first (its first bytes are in the buffer). A request that fits in the socket's
    /// buffer (nearly every one) is written at once and never reads.
    async fn send(&mut self, request: &[u8]) -> std::io::Result<bool> {
        let mut written = 0;
        std::future::poll_fn(|cx| loop {
            if written < request.len() {
                match Pin::new(&mut self.stream).poll_write(cx, &request[written..]) {
                    Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                    Poll::Ready(Ok(n)) => {
                        written += n;
                        continue;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {}
                }
            } else {
                // TLS: the last records can still be in the session when the socket was full.
                match Pin::new(&mut self.stream).poll_flush(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Ok(true)),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {}
                }
            }
            // Not zeroed: this runs on every call whose send is still in flight (io_uring, TLS).
            let mut early = [std::mem::MaybeUninit::<u8>::uninit(); 16 * 1024];
            let mut read = ReadBuf::uninit(&mut early);
            return match Pin::new(&mut self.stream).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
                }
                Poll::Ready(Ok(())) => {
                    self.buf.extend_from_slice(read.filled());
                    self.read_any = true;
                    Poll::Ready(Ok(false))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            };
        })
        .await
    }

    /// Whether the server closed this idle connection (FIN, reset, TLS close_notify) or wrote on
    /// it unasked (a 408 before closing): one poll that never waits. On Linux it costs no system
    /// call when nothing arrived, as tokio then knows the socket has nothing to read.
    fn closed_while_idle(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(&mut self.stream).poll_read(&mut cx, &mut buf).is_ready()
    }

    /// Reads one answer; gives its head, body (if `keep_body`) and body size on the wire.
    async fn answer(&mut self, head_request: bool, keep_body: bool) -> Result<(Head, Vec<u8>, u64), ErrorKind> {
        loop {
            // Past its first KiB, a head is parsed again only when a line may have ended (or it
            // is over the cap): one dribbled byte by byte costs a parse a line, not one a byte.
            let mut searched = 0;
            let head = loop {
                let len = self.buf.len();
                if len <= REPARSE_ALWAYS || len > MAX_HEAD || self.buf[searched..].contains(&b'\n') {
                    if let Some(head) = parse_head(&self.buf, head_request)? {
                        break head;
                    }
                }
                searched = self.buf.len();
                if !self.fill().await? {
                    parse_head(&self.buf, head_request)?; // a head cut short may be a broken one
                    return Err(ErrorKind::Io);
                }
            };
            if (100..200).contains(&head.status) {
                self.buf.advance(head.len); // 100 Continue and friends: the real answer follows
                continue;
            }
            self.buf.advance(head.len);
            let body = self.body(&head.framing, keep_body).await?;
            return Ok((head, body.0, body.1));
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Http1Conn<S> {
    /// Reads an answer's body as it arrives, dropping what is read: only a body kept for a check
    /// is held, up to `limits::MAX_KEPT_BODY`. Gives it (empty unless kept) and its size.
    async fn body(&mut self, framing: &Framing, keep: bool) -> Result<(Vec<u8>, u64), ErrorKind> {
        let mut body = Vec::new();
        let keep_part = |body: &mut Vec<u8>, part: &[u8]| {
            if keep && body.len() + part.len() > MAX_KEPT_BODY {
                return Err(ErrorKind::Protocol);
            }
            if keep {
                body.extend_from_slice(part);
            }
            Ok(())
        };
        let size = match *framing {
            Framing::None => 0,
            Framing::Length(n) => {
                if keep && n > MAX_KEPT_BODY as u64 {
                    return Err(ErrorKind::Protocol);
                }
                let mut left = n;
                loop {
                    let take = left.min(self.buf.len() as u64) as usize;
                    keep_part(&mut body, &self.buf[..take])?;
                    self.buf.advance(take);
                    left -= take as u64;
                    if left == 0 {
                        break n;
                    }
                    if !self.fill().await? {
                        return Err(ErrorKind::Io);
                    }
                }
            }
            Framing::Chunked => {
                let mut decoder = chunked::Chunked::default();
                let mut over = false;
                loop {
                    let (used, done) = decoder
                        .feed(&self.buf, |data| over |= keep_part(&mut body, data).is_err())
                        .map_err(|_| ErrorKind::Protocol)?;
                    self.buf.advance(used);
                    if over {
                        return Err(ErrorKind::Protocol);
                    }
                    if done {
                        break decoder.data;
                    }
                    if !self.fill().await? {
                        return Err(ErrorKind::Io);
                    }
                }
            }
            Framing::UntilClose => {
                let mut n = 0;
                loop {
                    keep_part(&mut body, &self.buf)?;
                    n += self.buf.len() as u64;
                    self.buf.clear();
                    if !self.fill().await? {
                        break n;
                    }
                }
            }
        };
        Ok((body, size))
    }
}

/// What one HTTP/1.1 answer came to, for the fuzz targets: its status and body size (inflated
/// when kept and gzip), or how it failed.
#[cfg(feature = "fuzzing")]
pub type Http1Answer = Result<(u16, u64), ErrorKind>;

/// For the fuzz targets: reads answers from `stream` as a call does, until one fails or says
/// close, 16 at most; a kept body that says gzip is inflated as a check would.
#[cfg(feature = "fuzzing")]
pub(crate) async fn read_answers<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    head_request: bool,
    keep_body: bool,
) -> Vec<Http1Answer> {
    let mut conn = Http1Conn::new(stream);
    let mut answers = Vec::new();
    for _ in 0..16 {
        let (head, body, size) = match conn.answer(head_request, keep_body).await {
            Ok(answer) => answer,
            Err(kind) => {
                answers.push(Err(kind));
                break;
            }
        };
        // A kept body is the whole body, within the limit; one not kept is not held at all.
        assert_eq!(body.len() as u64, if keep_body { size } else { 0 });
        assert!(body.len() <= MAX_KEPT_BODY);
        answers.push(match head.gzip && keep_body {
            true => crate::request::gunzip(&body).map(|b| (head.status, b.len() as u64)).map_err(|e| e.error_kind()),
            false => Ok((head.status, size)),
        });
        if head.close {
            break;
        }
    }
    answers
}

/// `request` as HTTP/1.1 writes it to `authority` (its `Host` unless the request has one).
fn serialise(request: &HttpRequest, authority: &str, close_each: bool) -> Wire {
    let body = request.wire_body();
    let mut head = format!("{} {} HTTP/1.1\r\n", request.method, request.path);
    if !request.has_header("host") {
        head.push_str(&format!("host: {authority}\r\n"));
    }
    for (name, value) in &request.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    for (name, value) in request.implied_headers() {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || !matches!(request.method.as_str(), "GET" | "HEAD" | "DELETE" | "OPTIONS") {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    if close_each && !request.has_header("connection") {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut wire = head.into_bytes();
    wire.extend_from_slice(&body);
    Wire {
        bytes: wire.into(),
        payload_sent: body.len() as u64,
        head_request: request.method == "HEAD",
        idempotent: matches!(request.method.as_str(), "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"),
    }
}

impl Target for Http1 {
    type Conn = Http1Conn;

    async fn connect(&self, _slot: usize) -> Result<Connected<Http1Conn>, ErrorKind> {
        let (stream, handshake) = self.endpoint.connect().await?;
        Ok(Connected::new(Http1Conn::new(stream), handshake))
    }

    fn varies(&self) -> bool {
        self.requests.varies()
    }

    fn reusable(&self, conn: &mut Http1Conn) -> bool {
        conn.answered == 0 || !conn.closed_while_idle()
    }

    async fn call(&self, conn: &mut Http1Conn) -> Reply {
        let request = match self.requests.pick() {
            Ok(request) => request,
            Err(_) => return Reply::error(ErrorKind::Validation, ByteCounts::default()),
        };
        let mut bytes = ByteCounts { sent: request.payload_sent, received: 0 };
        let keep_body = self.expect.body.is_some();
        let (head, body, size) = match conn.send(&request.bytes).await {
            // The server answered before the whole request was sent (a 413 for a body it will not
            // read): the answer is the call's, the connection ends with the unsent rest.
            Ok(false) => match conn.answer(request.head_request, keep_body).await {
                Ok((mut head, body, size)) => {
                    head.close = true;
                    (head, body, size)
                }
                Err(kind) => return Reply::broken(kind, bytes),
            },
            Ok(true) => {
                conn.read_any = !conn.buf.is_empty();
                match conn.answer(request.head_request, keep_body).await {
                    Ok(answer) => answer,
                    // A kept connection closed with no byte of answer: the server closed it as the
                    // request arrived (an idle timeout crossing it), so it did not process it (RFC
                    // 9112 §9.3.1).
                    Err(_) if conn.answered > 0 && !conn.read_any && request.idempotent => {
                        return Reply::unprocessed(bytes, false)
                    }
                    Err(kind) => return Reply::broken(kind, bytes),
                }
            }
            Err(e) => match self.early_answer(conn, &e, request.head_request, keep_body).await {
                Some(answer) => answer,
                // A kept connection the server had closed: a request it could not read whole was
                // not processed. On a new one, the server refused us.
                None if conn.answered == 0 => return Reply::broken(ErrorKind::Io, bytes),
                None => return Reply::unprocessed(bytes, false),
            },
        };
        conn.answered += 1;
        bytes.received = size;
        let mut reply = if !self.expect.status_ok(head.status) {
            Reply::error(ErrorKind::HttpStatus(head.status), bytes)
        } else if let Some(failed) = self.expect.judge_body(body, head.gzip) {
            Reply::error(failed, bytes)
        } else {
            Reply::ok(bytes)
        };
        reply.keep_connection = !head.close;
        reply
    }

    fn wire(&self) -> WireTotals {
        self.endpoint.wire()
    }

    fn connect_failures(&self) -> ConnectFailures {
        self.endpoint.connect_failures()
    }
}

#[cfg(test)]
mod tests;
