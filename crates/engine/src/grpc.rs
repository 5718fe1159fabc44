//! The gRPC target: unary and server-streaming calls over the shared HTTP/2 connections. The request
//! message is encoded (and compressed) once; answers are parsed frame by frame as they stream in.

use crate::h2pool::{request_block, H2Handle, H2Pool, HeaderList, RequestBlocks};
use crate::http2::{header_name, header_value};
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

/// Splits the answer's data into length-prefixed messages as chunks arrive.
#[derive(Default)]
struct Messages {
    pending: Vec<u8>,
    count: u64,
    payload: u64,
    /// The first message and whether it was compressed, kept only when checked.
    first: Option<(bool, Vec<u8>)>,
    broken: bool,
}

impl Messages {
    fn push(&mut self, chunk: &[u8], keep_first: bool) {
        self.pending.extend_from_slice(chunk);
        let mut at = 0;
        while self.pending.len() - at >= 5 {
            let len = u32::from_be_bytes(self.pending[at + 1..at + 5].try_into().unwrap()) as usize;
            if self.pending.len() - at - 5 < len {
                break;
            }
            let compressed = match self.pending[at] {
                0 => false,
                1 => true,
                _ => {
                    self.broken = true;
                    false
                }
            };
            if keep_first && self.first.is_none() {
                self.first = Some((compressed, self.pending[at + 5..at + 5 + len].to_vec()));
            }
            self.count += 1;
            self.payload += len as u64;
            at += 5 + len;
        }
        self.pending.drain(..at);
    }
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
            Err(e) if e.connection_survives() => return Reply::error(ErrorKind::Io, bytes),
            Err(_) => return Reply::broken(ErrorKind::Io, bytes),
        };
        if answer.status != 200 {
            return Reply::error(ErrorKind::HttpStatus(answer.status), bytes);
        }
        match grpc_status(&answer.headers, answer.trailers.as_ref()) {
            Some(0) => {}
            Some(code) => return Reply::error(ErrorKind::GrpcStatus(code), bytes),
            None => return Reply::error(ErrorKind::Io, bytes), // no status at all: a broken answer
        }
        if messages.broken || !messages.pending.is_empty() {
            return Reply::error(ErrorKind::Io, bytes);
        }
        if let Some(check) = &self.check {
            let good = match &messages.first {
                Some((false, message)) => check(message),
                Some((true, message)) => gunzip(message).is_some_and(|m| check(&m)),
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
            assert!(m.pending.is_empty());
            assert_eq!(m.first, Some((false, b"first".to_vec())));
        }
        let mut m = Messages::default();
        m.push(&frame(7, b"x"), false);
        assert!(m.broken);
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
