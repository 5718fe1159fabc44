//! A plain HTTP/1.1 client over one keep-alive connection, with full control
//! of method, headers and body bytes (bad input included).

use crate::error::{because, chain};
use crate::VerifyError;
use bytes::Bytes;
use callbench_engine::net::Stream;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub struct Http1Conn {
    addr: SocketAddr,
    sender: SendRequest<Pieces>,
}

/// A request body: one piece sent with its `Content-Length`, or pieces sent as they come with
/// `Transfer-Encoding: chunked` (a streamed upload), one chunk each.
pub(crate) struct Pieces {
    pieces: VecDeque<Bytes>,
    chunked: bool,
}

impl Pieces {
    pub(crate) fn whole(body: Bytes) -> Pieces {
        Pieces { pieces: VecDeque::from([body]), chunked: false }
    }

    pub(crate) fn chunked(pieces: Vec<Bytes>) -> Pieces {
        Pieces { pieces: pieces.into_iter().filter(|p| !p.is_empty()).collect(), chunked: true }
    }
}

impl Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.pieces.pop_front().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.iter().all(Bytes::is_empty) && !self.chunked
    }

    fn size_hint(&self) -> SizeHint {
        match self.chunked {
            true => SizeHint::default(),
            false => SizeHint::with_exact(self.pieces.iter().map(|p| p.len() as u64).sum()),
        }
    }
}

/// A TCP stream whose writes the server refused by closing (EPIPE, reset) count as written. A
/// server may answer a request early and close without reading its body (a 413 for an oversized
/// one, RFC 9112 §9.6); hyper would fail on the write and drop that answer, which is still in the
/// socket: this way it goes on to read it. A server that closed without answering still fails
/// the call, as hyper then reads the end of the stream instead of an answer.
struct EarlyAnswers(Stream);

impl AsyncRead for EarlyAnswers {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for EarlyAnswers {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.0).poll_write(cx, buf) {
            Poll::Ready(Err(e)) if refused(&e) => Poll::Ready(Ok(buf.len())),
            other => other,
        }
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_flush(cx) {
            Poll::Ready(Err(e)) if refused(&e) => Poll::Ready(Ok(())),
            other => other,
        }
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

fn refused(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset)
}

pub struct HttpReply {
    pub status: u16,
    pub content_type: String,
    pub content_encoding: String,
    /// Every header of the answer.
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Http1Conn {
    /// A connection to `addr`; an error is [`VerifyError::Unreachable`].
    pub async fn connect(addr: SocketAddr) -> Result<Http1Conn, VerifyError> {
        let stream = crate::dial::connect(addr, &[b"http/1.1"]).await?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(EarlyAnswers(stream)))
            .await
            .map_err(|e| VerifyError::Unreachable(chain(&e)))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Http1Conn { addr, sender })
    }

    /// False once the server has closed the connection.
    pub(crate) fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    /// Sends one request; `headers` with an empty value are not sent. A request that cannot be
    /// built is [`VerifyError::BadInput`], an answer that is not HTTP [`VerifyError::Contract`], a
    /// connection closed or no answer in 30 s [`VerifyError::Unreachable`].
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> Result<HttpReply, VerifyError> {
        self.send_body(method, path, headers, Pieces::whole(body)).await
    }

    /// Sends one request whose body is `body`, whole or in chunks.
    pub(crate) async fn send_body(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Pieces,
    ) -> Result<HttpReply, VerifyError> {
        let mut request = hyper::Request::builder().method(method).uri(path).header("host", self.addr.to_string());
        for (name, value) in headers.iter().filter(|(_, v)| !v.is_empty()) {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request.body(body).map_err(|e| VerifyError::BadInput(because("cannot build the request", &e)))?;
        self.sender.ready().await.map_err(|e| VerifyError::Unreachable(because("connection closed", &e)))?;
        let response = tokio::time::timeout(Duration::from_secs(30), async {
            let response = self.sender.send_request(request).await?;
            let status = response.status().as_u16();
            let content_type = header(response.headers(), "content-type");
            let content_encoding = header(response.headers(), "content-encoding");
            let headers = response.headers().clone();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, hyper::Error>(HttpReply { status, content_type, content_encoding, headers, body })
        })
        .await
        .map_err(|e| VerifyError::Unreachable(because("no answer within 30 s", &e)))?
        .map_err(|e| no_answer(&e))?;
        Ok(response)
    }
}

/// A call that got no whole answer: one that is not HTTP breaks the contract, a connection that
/// failed or closed is [`VerifyError::Unreachable`].
pub(crate) fn no_answer(e: &hyper::Error) -> VerifyError {
    match e.is_parse() {
        true => VerifyError::Contract(chain(e)),
        false => VerifyError::Unreachable(chain(e)),
    }
}

pub(crate) fn header(headers: &http::HeaderMap, name: &str) -> String {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server that answers 413 once it has read the head and closes without reading the body:
    /// the client's writes then fail (the kernel resets a socket closed with unread data).
    fn early_answering_server() -> SocketAddr {
        answering(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\nconnection: close\r\n\r\ntoo large")
    }

    #[tokio::test]
    async fn an_answer_sent_before_the_body_was_read_is_still_read() {
        let mut conn = Http1Conn::connect(early_answering_server()).await.unwrap();
        // 16 MiB: far more than the socket buffers hold, so the writes outlive the server's close.
        let body = Bytes::from(vec![b'x'; 16 << 20]);
        let reply = conn.send("POST", "/echo", &[], body).await.unwrap();
        assert_eq!((reply.status, &reply.body[..]), (413, &b"too large"[..]));
    }

    /// A server that reads the request's head, writes `answer` and closes.
    fn answering(answer: &'static [u8]) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            socket.write_all(answer).unwrap();
        });
        addr
    }

    #[tokio::test]
    async fn an_answer_that_is_not_http_breaks_the_contract_none_is_unreachable() {
        let mut conn = Http1Conn::connect(answering(b"hello, this is not HTTP\r\n\r\n")).await.unwrap();
        let e = conn.send("GET", "/health", &[], Bytes::new()).await.err().unwrap();
        assert!(matches!(e, VerifyError::Contract(_)), "{e:?}");
        let mut conn = Http1Conn::connect(answering(b"")).await.unwrap();
        let e = conn.send("GET", "/health", &[], Bytes::new()).await.err().unwrap();
        assert!(matches!(e, VerifyError::Unreachable(_)), "{e:?}");
        let e = conn.send("GET", "no path\n", &[], Bytes::new()).await.err().unwrap();
        assert!(matches!(&e, VerifyError::BadInput(m) if m.starts_with("cannot build the request: ")), "{e:?}");
    }
}
