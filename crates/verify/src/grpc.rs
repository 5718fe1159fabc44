//! A raw gRPC client over one HTTP/2 connection (h2c, prior knowledge): sends
//! any bytes as a message under any content type, and reads the status from
//! trailers or from a trailers-only reply.

use super::http1::{header, no_answer};
use crate::error::because;
use crate::VerifyError::{self, BadInput, Unreachable};
use bytes::{BufMut, Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::time::Duration;

pub struct GrpcConn {
    addr: SocketAddr,
    sender: SendRequest<Full<Bytes>>,
}

#[derive(Debug)]
pub struct GrpcReply {
    pub http_status: u16,
    /// grpc-status, if the server sent one.
    pub code: Option<i32>,
    pub message: String,
    /// The first reply message, without its 5-byte prefix (uncompressed replies only).
    pub body: Option<Bytes>,
    /// Every reply message in order, as sent: (compressed flag, payload); a cut-off one is left out.
    pub messages: Vec<(bool, Bytes)>,
    /// The reply's `grpc-encoding` and its first message as sent: (compressed flag, payload).
    pub encoding: String,
    pub raw_message: Option<(bool, Bytes)>,
}

/// `NOT_FOUND`, or `UNKNOWN_CODE` for a code gRPC does not define.
pub(crate) fn code_name(code: i32) -> &'static str {
    callbench_contract::grpc_status::name(code.into()).unwrap_or("UNKNOWN_CODE")
}

impl GrpcConn {
    pub(crate) async fn connect(addr: SocketAddr) -> Result<GrpcConn, VerifyError> {
        let stream = crate::dial::connect(addr, &[b"h2"]).await?;
        let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .max_frame_size(1 << 20)
            .initial_stream_window_size(8 << 20)
            .initial_connection_window_size(8 << 20)
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Unreachable(because("HTTP/2 handshake failed", &e)))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(GrpcConn { addr, sender })
    }

    pub(crate) fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    /// One unary call: `path` is `/package.Service/Method`, `message` the encoded request.
    pub(crate) async fn call(
        &mut self,
        path: &str,
        content_type: &str,
        message: &[u8],
    ) -> Result<GrpcReply, VerifyError> {
        self.call_with(path, content_type, message, false, &[]).await
    }

    /// One call whose request is `messages` in order (a client or bidi stream), then half-closed.
    pub(crate) async fn call_stream(
        &mut self,
        path: &str,
        content_type: &str,
        messages: &[Bytes],
    ) -> Result<GrpcReply, VerifyError> {
        let mut frames = BytesMut::new();
        for message in messages {
            frames.put_u8(0);
            frames.put_u32(message.len() as u32);
            frames.put_slice(message);
        }
        self.send(path, content_type, frames.freeze(), &[]).await
    }

    /// A unary call whose message is sent with the compressed flag set as given (the bytes as
    /// they are), with extra headers (`grpc-encoding`, `grpc-accept-encoding`...).
    pub(crate) async fn call_with(
        &mut self,
        path: &str,
        content_type: &str,
        message: &[u8],
        compressed: bool,
        headers: &[(&str, &str)],
    ) -> Result<GrpcReply, VerifyError> {
        let mut frame = BytesMut::with_capacity(message.len() + 5);
        frame.put_u8(compressed as u8);
        frame.put_u32(message.len() as u32);
        frame.put_slice(message);
        self.send(path, content_type, frame.freeze(), headers).await
    }

    /// Sends `frames` (length-prefixed messages) as the request body and reads the whole answer: a
    /// request that cannot be built is [`VerifyError::BadInput`], an answer that is not HTTP/2
    /// [`VerifyError::Contract`], a connection closed or no answer in 30 s
    /// [`VerifyError::Unreachable`].
    async fn send(
        &mut self,
        path: &str,
        content_type: &str,
        frames: Bytes,
        headers: &[(&str, &str)],
    ) -> Result<GrpcReply, VerifyError> {
        let mut request = hyper::Request::builder()
            .method("POST")
            .uri(format!("{}://{}{path}", if crate::dial::is_tls(self.addr) { "https" } else { "http" }, self.addr))
            .header("content-type", content_type)
            .header("te", "trailers");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(frames)).map_err(|e| BadInput(because("cannot build the request", &e)))?;
        self.sender.ready().await.map_err(|e| Unreachable(because("connection closed", &e)))?;
        tokio::time::timeout(Duration::from_secs(30), async {
            let response = self.sender.send_request(request).await?;
            let http_status = response.status().as_u16();
            let head_code = header(response.headers(), "grpc-status");
            let head_message = header(response.headers(), "grpc-message");
            let encoding = header(response.headers(), "grpc-encoding");
            let collected = response.into_body().collect().await?;
            let trailers = collected.trailers().cloned().unwrap_or_default();
            let data = collected.to_bytes();
            let (code, message) = match header(&trailers, "grpc-status") {
                c if c.is_empty() => (head_code, head_message),
                c => (c, header(&trailers, "grpc-message")),
            };
            Ok::<_, hyper::Error>(GrpcReply {
                http_status,
                code: code.parse().ok(),
                message,
                body: first_message(&data),
                messages: all_messages(&data),
                encoding,
                raw_message: raw_first_message(&data),
            })
        })
        .await
        .map_err(|e| Unreachable(because("no answer within 30 s", &e)))?
        .map_err(|e| no_answer(&e))
    }
}

/// The payload of the first length-prefixed message in `data` (uncompressed only).
fn first_message(data: &Bytes) -> Option<Bytes> {
    if data.len() < 5 || data[0] != 0 {
        return None;
    }
    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    (data.len() >= 5 + len).then(|| data.slice(5..5 + len))
}

/// Every whole length-prefixed message in `data`: (compressed flag, payload).
fn all_messages(data: &Bytes) -> Vec<(bool, Bytes)> {
    let mut messages = Vec::new();
    let mut at = 0;
    while data.len() >= at + 5 {
        let len = u32::from_be_bytes([data[at + 1], data[at + 2], data[at + 3], data[at + 4]]) as usize;
        if data.len() < at + 5 + len {
            break;
        }
        messages.push((data[at] == 1, data.slice(at + 5..at + 5 + len)));
        at += 5 + len;
    }
    messages
}

/// The first length-prefixed message in `data`: its compressed flag and payload.
fn raw_first_message(data: &Bytes) -> Option<(bool, Bytes)> {
    if data.len() < 5 {
        return None;
    }
    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    (data.len() >= 5 + len).then(|| (data[0] == 1, data.slice(5..5 + len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_message() {
        let data = Bytes::from_static(&[0, 0, 0, 0, 2, 8, 1, 0, 0]);
        assert_eq!(first_message(&data).unwrap().as_ref(), &[8, 1]);
        assert!(first_message(&Bytes::from_static(&[0, 0, 0, 0, 9, 1])).is_none());
        assert_eq!(code_name(8), "RESOURCE_EXHAUSTED");
        assert_eq!(code_name(99), "UNKNOWN_CODE");
        let two = Bytes::from_static(&[0, 0, 0, 0, 1, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
        let got = all_messages(&two);
        assert_eq!(got, vec![(false, Bytes::from_static(&[7])), (true, Bytes::new())]);
    }
}
