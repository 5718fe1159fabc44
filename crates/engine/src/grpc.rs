//! The gRPC target: unary and server-streaming calls over the shared HTTP/2 connections. The request
//! message is encoded (and compressed) once; answers are parsed frame by frame as they stream in.

use crate::h2pool::{request_block, H2Handle, H2Pool, HeaderList, RequestBlocks};
use crate::http2::{header_name, header_value};
use crate::net::failures::ConnectFailures;
use crate::net::Endpoint;
use crate::record::{ByteCounts, ErrorKind};
use crate::request::{gunzip, gzip, BodyCheck};
use crate::target::{Connected, Reply, Target, WireTotals};
use bytes::Bytes;

pub struct GrpcCall {
    /// `/package.Service/Method`.
    pub path: String,
    /// The request message, protobuf-encoded.
    pub message: Vec<u8>,
    /// Metadata (`-H`), sent as headers.
    pub metadata: Vec<(String, String)>,
    /// Compress the request with gzip and accept gzip answers.
    pub gzip: bool,
    /// Checks the first answer message.
    pub check: Option<BodyCheck>,
}

pub struct Grpc {
    pool: H2Pool,
    /// The call's HPACK header blocks, encoded once.
    block: RequestBlocks,
    frame: Bytes,
    payload_sent: u64,
    check: Option<BodyCheck>,
}

impl Grpc {
    pub fn new(endpoint: Endpoint, connections: usize, fresh_each_call: bool, call: GrpcCall) -> Result<Self, String> {
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
            headers.push((name.clone(), value.clone()));
        }
        let block = request_block("POST", endpoint.is_tls(), &endpoint.authority(), path.as_str(), &headers);
        let message = if call.gzip { gzip(&call.message) } else { call.message };
        let mut frame = Vec::with_capacity(5 + message.len());
        frame.push(u8::from(call.gzip));
        frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
        frame.extend_from_slice(&message);
        Ok(Grpc {
            pool: H2Pool::new(endpoint, connections, fresh_each_call),
            block,
            frame: frame.into(),
            payload_sent: message.len() as u64,
            check: call.check,
        })
    }
}

/// Splits the answer's data into length-prefixed messages as chunks arrive, holding only the
/// prefix being read and, when checked, the first message: a length prefix of 4 GiB costs
/// nothing until its bytes come, and a message to keep beyond `limits::MAX_KEPT_BODY` is refused.
#[derive(Default)]
pub(crate) struct Messages {
    /// The 5-byte prefix of the next message, as far as it has come.
    prefix: Vec<u8>,
    /// The message being read: its length and the bytes of it still to come.
    current: Option<(usize, usize)>,
    pub(crate) count: u64,
    pub(crate) payload: u64,
    /// The first message and whether it was compressed, kept only when checked.
    pub(crate) first: Option<(bool, Vec<u8>)>,
    /// Whether any message came with the compressed flag.
    pub(crate) compressed: bool,
    keeping: bool,
    pub(crate) broken: bool,
}

impl Messages {
    pub(crate) fn push(&mut self, mut chunk: &[u8], keep_first: bool) {
        while !chunk.is_empty() && !self.broken {
            let Some((len, left)) = self.current else {
                let n = (5 - self.prefix.len()).min(chunk.len());
                self.prefix.extend_from_slice(&chunk[..n]);
                chunk = &chunk[n..];
                if self.prefix.len() == 5 {
                    self.start_message(keep_first);
                }
                continue;
            };
            let n = left.min(chunk.len());
            if self.keeping {
                if let Some((_, kept)) = &mut self.first {
                    kept.extend_from_slice(&chunk[..n]);
                }
            }
            chunk = &chunk[n..];
            self.current = Some((len, left - n));
            if left == n {
                self.count += 1;
                self.payload += len as u64;
                self.current = None;
                self.keeping = false;
            }
        }
        if let Some((len, 0)) = self.current {
            // An empty message ends with its prefix.
            self.count += 1;
            self.payload += len as u64;
            self.current = None;
            self.keeping = false;
        }
    }

    fn start_message(&mut self, keep_first: bool) {
        let compressed = match self.prefix[0] {
            0 => false,
            1 => true,
            _ => {
                self.broken = true;
                return;
            }
        };
        self.compressed |= compressed;
        let len = u32::from_be_bytes(self.prefix[1..5].try_into().expect("five bytes")) as usize;
        self.prefix.clear();
        self.keeping = keep_first && self.first.is_none();
        if self.keeping {
            if len > crate::limits::MAX_KEPT_BODY {
                self.broken = true;
                return;
            }
            self.first = Some((compressed, Vec::new()));
        }
        self.current = Some((len, len));
    }

    /// Whether the data ended between messages.
    pub(crate) fn complete(&self) -> bool {
        self.prefix.is_empty() && self.current.is_none()
    }
}

/// Whether the answer's headers name a compression for its messages: a message flagged compressed
/// in an answer that names none (or `identity`) is an error (INTERNAL, by gRPC's HTTP/2 protocol).
fn declares_compression(head: &HeaderList) -> bool {
    head.get("grpc-encoding").is_some_and(|name| !name.trim_ascii().eq_ignore_ascii_case(b"identity"))
}

/// grpc-status from the trailers, or from the headers of a trailers-only answer.
fn grpc_status(head: &HeaderList, trailers: Option<&HeaderList>) -> Option<i32> {
    let value = trailers.and_then(|t| t.get("grpc-status")).or_else(|| head.get("grpc-status"))?;
    std::str::from_utf8(value).ok()?.parse().ok()
}

impl Target for Grpc {
    type Conn = H2Handle;

    async fn connect(&self, slot: usize) -> Result<Connected<H2Handle>, ErrorKind> {
        self.pool.get(slot).await
    }

    async fn call(&self, conn: &mut H2Handle) -> Reply {
        let mut messages = Messages::default();
        let keep = self.check.is_some();
        let answer = conn.exchange(&self.block, &self.frame, |chunk| messages.push(chunk, keep)).await;
        let bytes = ByteCounts { sent: self.payload_sent, received: messages.payload };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) if e.unprocessed() => return Reply::unprocessed(bytes, e.connection_survives()),
            Err(e) if e.connection_survives() => return Reply::error(e.error_kind(), bytes),
            Err(e) => return Reply::broken(e.error_kind(), bytes),
        };
        if answer.status != 200 {
            return Reply::error(ErrorKind::HttpStatus(answer.status), bytes);
        }
        match grpc_status(&answer.headers, answer.trailers.as_ref()) {
            Some(0) => {}
            Some(code) => return Reply::error(ErrorKind::GrpcStatus(code), bytes),
            None => return Reply::error(ErrorKind::Io, bytes), // no status at all: a broken answer
        }
        if messages.broken || !messages.complete() || (messages.compressed && !declares_compression(&answer.headers)) {
            return Reply::error(ErrorKind::Protocol, bytes);
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
    fn messages_split_across_chunks() {
        let data = [frame(0, b"first"), frame(0, b""), frame(1, b"zz")].concat();
        for split in 0..data.len() {
            let mut m = Messages::default();
            m.push(&data[..split], true);
            m.push(&data[split..], true);
            assert_eq!((m.count, m.payload, m.broken), (3, 7, false), "split at {split}");
            assert!(m.complete());
            assert_eq!(m.first, Some((false, b"first".to_vec())));
        }
        let mut m = Messages::default();
        m.push(&frame(7, b"x"), false);
        assert!(m.broken);
        // Cut short: the data ends inside a prefix or a message.
        for cut in [3, 7] {
            let mut m = Messages::default();
            m.push(&frame(0, b"first")[..cut], true);
            assert!(!m.complete() && !m.broken, "cut at {cut}");
        }
    }

    #[test]
    fn a_huge_length_prefix_holds_nothing_until_its_bytes_come() {
        let mut huge = vec![0u8];
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        let mut m = Messages::default();
        m.push(&huge, false);
        m.push(&[7u8; 1000], false);
        assert!(!m.broken && !m.complete() && m.first.is_none() && m.prefix.is_empty());
        // Kept (checked), it is refused at once: beyond what the engine keeps.
        let mut m = Messages::default();
        m.push(&huge, true);
        assert!(m.broken);
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
    fn status_from_trailers_or_trailers_only() {
        let mut head = HeaderList::default();
        let mut trailers = HeaderList::default();
        assert_eq!(grpc_status(&head, None), None);
        head.push(b"grpc-status", b"5");
        assert_eq!(grpc_status(&head, None), Some(5));
        trailers.push(b"grpc-status", b"0");
        assert_eq!(grpc_status(&head, Some(&trailers)), Some(0));
    }
}
