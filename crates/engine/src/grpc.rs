//! The gRPC target: calls of every kind — unary, server streaming, client streaming and
//! bidirectional — over the shared HTTP/2 connections. The request messages are encoded (and
//! compressed) once; answers are parsed frame by frame as they stream in. A streaming call is one
//! call from its first request message to the end of its answer: its latency is the whole stream's,
//! and its messages are counted beside it ([`Streamed`]).

mod messages;

use crate::call_data::{CallData, Prepared};
use crate::h2pool::{request_block, Answer, H2Error, H2Handle, H2Pool, HeaderList, RequestBlocks};
use crate::http2::{header_name, header_value};
use crate::net::failures::ConnectFailures;
use crate::net::Endpoint;
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{gunzip, BodyCheck};
use crate::target::{Connected, Reply, Streamed, Target, WireTotals};
use bytes::Bytes;
pub(crate) use messages::Messages;
use std::time::Instant;

/// What a method takes and gives: its request and its answer are one message or a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Unary,
    ServerStreaming,
    ClientStreaming,
    Bidi,
}

impl Shape {
    pub fn of(client_streams: bool, server_streams: bool) -> Shape {
        match (client_streams, server_streams) {
            (false, false) => Shape::Unary,
            (false, true) => Shape::ServerStreaming,
            (true, false) => Shape::ClientStreaming,
            (true, true) => Shape::Bidi,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Unary => "unary",
            Shape::ServerStreaming => "server-streaming",
            Shape::ClientStreaming => "client-streaming",
            Shape::Bidi => "bidi-streaming",
        }
    }

    /// Whether the request is a stream of messages.
    pub fn client_streams(self) -> bool {
        matches!(self, Shape::ClientStreaming | Shape::Bidi)
    }

    /// Whether a successful answer is exactly one message (unary and client-streaming methods).
    pub fn answers_once(self) -> bool {
        matches!(self, Shape::Unary | Shape::ClientStreaming)
    }
}

/// How a streaming call's request messages go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pace {
    /// All of them at once, then the request ends (as ghz sends a stream): the stream's throughput.
    #[default]
    Burst,
    /// Each one after the answer to the one before, the request ending with the last (bidirectional
    /// methods only): a conversation, one round trip per message.
    PingPong,
}

pub struct GrpcCall {
    /// `/package.Service/Method`.
    pub path: String,
    /// The request messages of a call, protobuf-encoded: exactly one for unary and server-streaming
    /// methods, any number (none included) for client- and bidi-streaming ones. The same for every
    /// call, or varying (in turn, or made per call).
    pub messages: CallData<Vec<Vec<u8>>>,
    /// Metadata (`-H`), sent as headers.
    pub metadata: Vec<(String, String)>,
    /// Compress the requests with gzip and accept gzip answers.
    pub gzip: bool,
    /// Checks the first answer message.
    pub check: Option<BodyCheck>,
    pub shape: Shape,
    pub pace: Pace,
    /// The answer messages a call must have, when known (else the call fails validation).
    pub expect_messages: Option<u64>,
}

impl GrpcCall {
    /// A unary call of `path` with one encoded `message`.
    pub fn unary(path: String, message: Vec<u8>) -> GrpcCall {
        GrpcCall {
            path,
            messages: CallData::One(vec![message]),
            metadata: Vec::new(),
            gzip: false,
            check: None,
            shape: Shape::Unary,
            pace: Pace::Burst,
            expect_messages: None,
        }
    }
}

pub struct Grpc {
    pool: H2Pool,
    /// The call's HPACK header blocks, encoded once.
    block: RequestBlocks,
    requests: Prepared<Framed>,
    check: Option<BodyCheck>,
    shape: Shape,
    pace: Pace,
    expect_messages: Option<u64>,
}

/// A call's request messages as they go out: each framed (prefix, compressed if asked), and all
/// of them together.
struct Framed {
    frames: Vec<Bytes>,
    body: Bytes,
    /// Payload bytes of the first `i` messages, for `i` from 0 to all of them.
    payload_sent: Vec<u64>,
}

impl Framed {
    fn new(messages: &[Vec<u8>], shape: Shape, gzip: bool) -> Result<Framed, String> {
        if !shape.client_streams() && messages.len() != 1 {
            let n = messages.len();
            return Err(format!("a {} method takes exactly one request message, not {n}", shape.name()));
        }
        let mut frames = Vec::with_capacity(messages.len());
        let mut payload_sent = vec![0];
        for message in messages {
            let compressed;
            let message = if gzip {
                compressed = crate::request::gzip(message);
                &compressed
            } else {
                message
            };
            payload_sent.push(payload_sent.last().copied().unwrap_or(0) + message.len() as u64);
            frames.push(Bytes::from(frame(gzip, message)));
        }
        Ok(Framed { body: Bytes::from(frames.concat()), frames, payload_sent })
    }
}

impl Grpc {
    pub fn new(endpoint: Endpoint, connections: usize, fresh_each_call: bool, call: GrpcCall) -> Result<Self, String> {
        if call.pace == Pace::PingPong && call.shape != Shape::Bidi {
            return Err(format!("ping-pong pacing is for bidi-streaming methods; this one is {}", call.shape.name()));
        }
        let path: http::uri::PathAndQuery =
            call.path.parse().map_err(|e| format!("bad gRPC method path {:?}: {e}", call.path))?;
        let mut headers: Vec<(String, String)> = vec![
            ("content-type".into(), "application/grpc".into()),
            ("te".into(), "trailers".into()),
            ("user-agent".into(), concat!("callbench/", env!("CARGO_PKG_VERSION")).into()),
        ];
        if call.gzip {
            headers.push(("grpc-encoding".into(), "gzip".into()));
            headers.push(("grpc-accept-encoding".into(), "gzip".into()));
        }
        for (name, value) in &call.metadata {
            header_name(name)?;
            header_value(name, value)?;
            if !name.eq_ignore_ascii_case("host") {
                headers.push((name.clone(), value.clone()));
            }
        }
        // A `Host` in the metadata is the call's :authority (a name-based virtual host, a gateway's route).
        let authority = crate::request::authority(&call.metadata, endpoint.authority());
        let block = request_block("POST", endpoint.is_tls(), &authority, path.as_str(), &headers);
        let (shape, gzip) = (call.shape, call.gzip);
        let requests = Prepared::new(call.messages, move |messages| Framed::new(messages, shape, gzip))?;
        Ok(Grpc {
            pool: H2Pool::new(endpoint, connections, fresh_each_call),
            block,
            requests,
            check: call.check,
            shape: call.shape,
            pace: call.pace,
            expect_messages: call.expect_messages,
        })
    }

    /// A ping-pong stream: sends each message once the answers have caught up with those sent.
    /// Gives the answer and how many messages went out.
    async fn converse(
        &self,
        request: &Framed,
        conn: &H2Handle,
        messages: &mut Messages,
        first_answer: &mut Option<Instant>,
    ) -> (Result<Answer, H2Error>, usize) {
        let keep = self.check.is_some();
        let n = request.frames.len();
        let opening = request.frames.first().cloned().unwrap_or_default();
        let mut stream = match conn.open(&self.block, &opening, n <= 1).await {
            Ok(stream) => stream,
            Err(e) => return (Err(e), 0),
        };
        let mut sent = n.min(1);
        loop {
            let step = stream.next(&mut |chunk: &[u8]| messages.push(chunk, keep)).await;
            if first_answer.is_none() && messages.count > 0 {
                *first_answer = Some(Instant::now());
            }
            if let Some(answer) = step {
                return (answer, sent);
            }
            while sent < n && messages.count >= sent as u64 {
                stream.send(request.frames[sent].clone(), sent + 1 == n);
                sent += 1;
            }
        }
    }

    /// The call's outcome from its answer and the messages it carried.
    fn judge(&self, answer: Result<Answer, H2Error>, messages: &Messages, bytes: ByteCounts) -> Reply {
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) if e.unprocessed() => return Reply::unprocessed(bytes, e.connection_survives()),
            Err(e) if e.connection_survives() => return Reply::error(e.error_kind(), bytes),
            Err(e) => return Reply::broken(e.error_kind(), bytes),
        };
        if answer.status != 200 {
            return Reply::error(ErrorKind::HttpStatus(answer.status), bytes);
        }
        if !is_grpc(&answer.headers) {
            return Reply::error(ErrorKind::Protocol, bytes); // grpc-go: "malformed header: missing HTTP content-type"
        }
        match grpc_status(&answer.headers, answer.trailers.as_ref(), messages.any_data) {
            Some(0) => {}
            Some(code) => return Reply::error(ErrorKind::GrpcStatus(code), bytes),
            // No status where gRPC puts it (grpc-go: INTERNAL): the answer broke the protocol.
            None => return Reply::error(ErrorKind::Protocol, bytes),
        }
        if messages.broken || !messages.complete() || (messages.compressed && !declares_compression(&answer.headers)) {
            return Reply::error(ErrorKind::Protocol, bytes);
        }
        if self.shape.answers_once() && messages.count != 1 {
            return Reply::error(ErrorKind::Protocol, bytes); // grpc-go: INTERNAL, "no" or "more than one" message
        }
        if self.expect_messages.is_some_and(|n| n != messages.count) {
            return Reply::error(ErrorKind::Validation, bytes);
        }
        if let Some(check) = &self.check {
            let good = match &messages.first {
                Some((false, message)) => check(message),
                Some((true, message)) => match gunzip(message) {
                    Ok(m) => check(&m),
                    Err(e) => return Reply::error(e.error_kind(), bytes),
                },
                None => false,
            };
            if !good {
                return Reply::error(ErrorKind::Validation, bytes);
            }
        }
        Reply::ok(bytes)
    }
}

/// A message as gRPC frames it on HTTP/2: the compressed flag, its length, the message.
fn frame(compressed: bool, message: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(5 + message.len());
    frame.push(u8::from(compressed));
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(message);
    frame
}

/// Whether the answer's headers name a compression for its messages: a message flagged compressed
/// in an answer that names none (or `identity`) is an error (INTERNAL, by gRPC's HTTP/2 protocol).
fn declares_compression(head: &HeaderList) -> bool {
    head.get("grpc-encoding").is_some_and(|name| !name.trim_ascii().eq_ignore_ascii_case(b"identity"))
}

/// Whether an answer's head says gRPC: `content-type: application/grpc`, or `application/grpc+…` /
/// `application/grpc;…` (gRPC over HTTP/2's Content-Type rule, as grpc-go reads it).
fn is_grpc(head: &HeaderList) -> bool {
    head.get("content-type").is_some_and(|v| {
        let v = v.trim_ascii();
        v.len() >= 16
            && v[..16].eq_ignore_ascii_case(b"application/grpc")
            && matches!(v.get(16), None | Some(b'+' | b';'))
    })
}

/// grpc-status from the trailers; from the head only when the answer is trailers-only (its head
/// ended the stream: no DATA, no trailers). An answer with data and no trailers has none, whatever
/// its head says (gRPC over HTTP/2: the status is the answer's last word).
fn grpc_status(head: &HeaderList, trailers: Option<&HeaderList>, data_came: bool) -> Option<i32> {
    let value = match trailers {
        Some(trailers) => trailers.get("grpc-status")?,
        None if !data_came => head.get("grpc-status")?,
        None => return None,
    };
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

impl Target for Grpc {
    type Conn = H2Handle;

    async fn connect(&self, slot: usize) -> Result<Connected<H2Handle>, ErrorKind> {
        self.pool.get(slot).await
    }

    async fn call(&self, conn: &mut H2Handle) -> Reply {
        let request = match self.requests.pick() {
            Ok(request) => request,
            Err(_) => return Reply::error(ErrorKind::Validation, ByteCounts::default()),
        };
        let mut messages = Messages::default();
        let keep = self.check.is_some();
        let mut first_answer = None;
        let (answer, sent) = match self.pace {
            Pace::Burst => {
                let answer = conn
                    .exchange(&self.block, &request.body, |chunk| {
                        messages.push(chunk, keep);
                        if first_answer.is_none() && messages.count > 0 {
                            first_answer = Some(Instant::now());
                        }
                    })
                    .await;
                (answer, request.frames.len())
            }
            Pace::PingPong => self.converse(&request, conn, &mut messages, &mut first_answer).await,
        };
        let bytes = ByteCounts { sent: request.payload_sent[sent], received: messages.payload };
        let streamed = Streamed {
            sent: u32::try_from(sent).unwrap_or(u32::MAX),
            received: u32::try_from(messages.count).unwrap_or(u32::MAX),
            first_answer,
        };
        let reply = self.judge(answer, &messages, bytes);
        if self.shape == Shape::Unary {
            reply
        } else {
            reply.streamed(streamed)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(flag: u8, body: &[u8]) -> Vec<u8> {
        let mut f = vec![flag];
        f.extend_from_slice(&(body.len() as u32).to_be_bytes());
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn a_compressed_message_needs_an_encoding_named() {
        let mut m = Messages::default();
        m.push(&[frame(0, b"plain"), frame(0, b"")].concat(), false);
        assert!(!m.compressed);
        m.push(&frame(1, b"zz"), false);
        assert!(m.compressed && !m.broken);
        let mut head = HeaderList::default();
        assert!(!declares_compression(&head));
        head.push(b"grpc-encoding", b"identity");
        assert!(!declares_compression(&head));
        let mut head = HeaderList::default();
        head.push(b"grpc-encoding", b"gzip");
        assert!(declares_compression(&head));
    }

    #[test]
    fn the_answer_must_say_grpc() {
        let head = |ct: &[u8]| {
            let mut h = HeaderList::default();
            h.push(b"content-type", ct);
            h
        };
        for good in [&b"application/grpc"[..], b"application/grpc+proto", b"Application/GRPC; charset=x"] {
            assert!(is_grpc(&head(good)), "{}", String::from_utf8_lossy(good));
        }
        for bad in [&b"application/json"[..], b"application/grpc-web", b"text/plain", b"application/grp"] {
            assert!(!is_grpc(&head(bad)), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!is_grpc(&HeaderList::default()));
    }

    #[test]
    fn status_from_trailers_or_trailers_only() {
        let mut head = HeaderList::default();
        let mut trailers = HeaderList::default();
        assert_eq!(grpc_status(&head, None, false), None);
        head.push(b"grpc-status", b"5");
        assert_eq!(grpc_status(&head, None, false), Some(5), "trailers-only");
        assert_eq!(
            grpc_status(&head, None, true),
            None,
            "data, then no trailers: the head's status is not the answer's"
        );
        assert_eq!(grpc_status(&head, Some(&trailers), true), None, "trailers without a status");
        trailers.push(b"grpc-status", b"0");
        assert_eq!(grpc_status(&head, Some(&trailers), true), Some(0));
    }
}
