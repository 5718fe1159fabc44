//! The gRPC target: calls of every kind — unary, server streaming, client streaming and
//! bidirectional — over the shared HTTP/2 connections. The request messages are encoded (and
//! compressed) once; answers are parsed frame by frame as they stream in. A streaming call is one
//! call from its first request message to the end of its answer: its latency is the whole stream's,
//! and its messages are counted beside it ([`Streamed`]).

mod messages;

use crate::call_data::{CallData, Prepared};
/// grpc-message's decoding, for dynproto's own calls (reflection).
pub use crate::grpc_rules::percent_decode;
pub use crate::grpc_rules::Shape;
use crate::grpc_rules::{self, Received};
use crate::h2pool::{request_block, Answer, H2Error, H2Handle, H2Pool, RequestBlocks};
use crate::http2::{header_name, header_value};
use crate::net::failures::ConnectFailures;
use crate::net::Endpoint;
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{gunzip, BodyCheck};
use crate::target::{Connected, Reply, Streamed, Target, WireTotals};
use crate::EngineError;
use bytes::Bytes;
pub(crate) use messages::Messages;
use std::sync::OnceLock;
use std::time::Instant;

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
    /// The first failed call's grpc-status and grpc-message (see [`Target::first_failure`]).
    first_failure: OnceLock<(i32, String)>,
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
    pub fn new(
        endpoint: Endpoint,
        connections: usize,
        fresh_each_call: bool,
        call: GrpcCall,
    ) -> Result<Self, EngineError> {
        if call.pace == Pace::PingPong && call.shape != Shape::Bidi {
            let why = format!("ping-pong pacing is for bidi-streaming methods; this one is {}", call.shape.name());
            return Err(EngineError::Settings(why));
        }
        let path: http::uri::PathAndQuery = call
            .path
            .parse()
            .map_err(|e| EngineError::Settings(format!("bad gRPC method path {:?}: {e}", call.path)))?;
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
        let requests = Prepared::new(call.messages, move |messages| Framed::new(messages, shape, gzip))
            .map_err(EngineError::Settings)?;
        Ok(Grpc {
            pool: H2Pool::new(endpoint, connections, fresh_each_call),
            block,
            requests,
            check: call.check,
            shape: call.shape,
            pace: call.pace,
            expect_messages: call.expect_messages,
            first_failure: OnceLock::new(),
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
        let received = Received {
            count: messages.count,
            any_data: messages.any_data,
            whole: !messages.broken && messages.complete(),
            compressed: messages.compressed,
        };
        let trailers = answer.trailers.as_ref();
        if let Err(kind) = grpc_rules::verdict(self.shape, answer.status, &answer.headers, trailers, received) {
            if let (ErrorKind::GrpcStatus(code), None) = (kind, self.first_failure.get()) {
                if let Some(message) = grpc_rules::grpc_message(&answer.headers, trailers, received.any_data) {
                    let _ = self.first_failure.set((code, shown(&message)));
                }
            }
            return Reply::error(kind, bytes);
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

/// The longest grpc-message kept (in characters): a server's words, not its payload.
const MAX_SHOWN: usize = 200;

/// A server's grpc-message as callbench prints it: one line, at most [`MAX_SHOWN`] characters.
fn shown(message: &str) -> String {
    let line = callbench_primitives::error_text::one_line(message);
    match line.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
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

    fn first_failure(&self) -> Option<String> {
        self.first_failure.get().map(|(code, message)| format!("grpc_{code}: {message}"))
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
    fn a_compressed_flag_is_noted_and_breaks_nothing() {
        let mut m = Messages::default();
        m.push(&[frame(0, b"plain"), frame(0, b"")].concat(), false);
        assert!(!m.compressed);
        m.push(&frame(1, b"zz"), false);
        assert!(m.compressed && !m.broken);
    }

    #[test]
    fn a_servers_words_are_shown_on_one_line_and_bounded() {
        assert_eq!(shown("no such\nuser"), "no such user");
        let long = "ü".repeat(MAX_SHOWN + 5);
        assert_eq!(shown(&long), format!("{}…", "ü".repeat(MAX_SHOWN)));
        assert_eq!(shown(&"x".repeat(MAX_SHOWN)), "x".repeat(MAX_SHOWN));
    }
}
