//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every build but
//! theirs): each hands arbitrary server bytes to one of the decoders the engine wrote, through
//! the code a run uses, and checks what must hold whatever the bytes: the same answer whether the
//! bytes come whole or in pieces, nothing kept past the limits, no wait on bytes already there.

use crate::grpc::Messages;
use crate::h2client::hpack::Decoder;
use crate::h2client::{request_block, Connection};
use crate::http1::chunked::Chunked;
use crate::limits::MAX_KEPT_BODY;
use bytes::Bytes;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

pub use crate::h2client::check_round_trip as hpack_round_trip;

/// A server's bytes as a socket would give them: `step` at a time, then the end of the stream.
/// What the client writes is dropped.
pub struct Pieces<'a> {
    data: &'a [u8],
    step: usize,
}

impl<'a> Pieces<'a> {
    pub fn new(data: &'a [u8], step: usize) -> Self {
        Pieces { data, step: step.max(1) }
    }
}

impl AsyncRead for Pieces<'_> {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let n = self.step.min(self.data.len()).min(buf.remaining());
        buf.put_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Pieces<'_> {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Runs a future whose every read is already satisfied: waiting would mean the code waits for
/// bytes that are there, or for more after the stream ended.
fn at_once<F: Future>(f: F) -> F::Output {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("waited on a stream that had ended"),
    }
}

pub use crate::http1::Http1Answer;

/// Reads up to 16 pipelined HTTP/1.1 answers from `data` as a run reads them (each body kept
/// for a check when `keep_body`, inflated when it says gzip), the bytes coming `step` at a time.
/// The answers must be the same as when the bytes come whole.
pub fn http1_answers(data: &[u8], step: usize, head_request: bool, keep_body: bool) -> Vec<Http1Answer> {
    let read = |step| at_once(crate::http1::read_answers(Pieces::new(data, step), head_request, keep_body));
    let answers = read(step);
    assert_eq!(answers, read(usize::MAX), "the answers changed with the bytes' arrival in pieces of {step}");
    answers
}

/// A chunked body decoded as the HTTP/1.1 reader decodes it (what `feed` used is dropped, the
/// rest waits for more), bytes coming `step` at a time: the same data, end and failure as whole.
pub fn chunked(data: &[u8], step: usize) {
    let decode = |step: usize| {
        let (mut decoder, mut out, mut held) = (Chunked::default(), Vec::new(), Vec::new());
        for piece in data.chunks(step.max(1)) {
            held.extend_from_slice(piece);
            match decoder.feed(&held, |d| out.extend_from_slice(d)) {
                Ok((used, done)) => {
                    assert!(used <= held.len());
                    held.drain(..used);
                    if done {
                        return (Ok(true), out, held.len());
                    }
                }
                Err(broken) => return (Err(broken), out, held.len()),
            }
            // What waits for more is at most a size line or a trailer section's unfinished line.
            let most = crate::limits::MAX_TRAILERS.max(crate::limits::MAX_CHUNK_LINE) + 2;
            assert!(held.len() <= most, "held {} bytes", held.len());
        }
        (Ok(false), out, held.len())
    };
    let (whole, pieces) = (decode(usize::MAX), decode(step));
    assert_eq!(whole.0, pieces.0, "pieces of {step}");
    if whole.0.is_ok() {
        // A failure may come at different points of the data; success must not.
        assert_eq!(whole.1, pieces.1, "pieces of {step}");
    }
}

/// gRPC messages split from DATA as it arrives `step` at a time: the same count, payload and
/// kept first message as from the whole, and no kept message past the limit.
pub fn grpc_messages(data: &[u8], step: usize, keep_first: bool) {
    let split = |step: usize| {
        let mut m = Messages::default();
        for piece in data.chunks(step.max(1)) {
            m.push(piece, keep_first);
        }
        if let Some((compressed, first)) = &m.first {
            assert!(first.len() <= MAX_KEPT_BODY);
            if *compressed && m.complete() {
                let _ = crate::request::gunzip(first);
            }
        }
        (m.count, m.payload, m.broken, m.complete(), m.first)
    };
    let whole = split(usize::MAX);
    assert_eq!(whole, split(step), "pieces of {step}");
}

/// HPACK blocks in sequence on one connection's decoder, each `[len, block...]`; stops at the
/// first block refused (the connection would end there).
pub fn hpack_decode(mut data: &[u8]) {
    let mut decoder = Decoder::default();
    while let Some((&len, rest)) = data.split_first() {
        let (block, rest) = rest.split_at((len as usize).min(rest.len()));
        data = rest;
        let mut size = 0;
        if decoder.decode(block, |n, v| size += n.len() + v.len()).is_err() {
            return;
        }
    }
}

/// The HTTP/2 connection fed `server` as everything the server sends (after the client's
/// preface), `step` bytes at a time, while three gRPC-shaped calls run on it: every call ends
/// (answered or failed) once the server's bytes end, and nothing panics.
pub fn h2_connection(server: &[u8], step: usize) {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    rt.block_on(async {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (mut from_client, mut to_client) = tokio::io::split(server_side);
        tokio::spawn(async move { tokio::io::copy(&mut from_client, &mut tokio::io::sink()).await });
        let connection = Connection::start(client);
        let headers = [("content-type".to_string(), "application/grpc".to_string()), ("te".into(), "trailers".into())];
        let blocks = request_block("POST", false, "localhost", "/callbench.v1.Auth/Login", &headers);
        let body = Bytes::from_static(b"\0\0\0\0\x05hello");
        let call = || async {
            let mut received = 0usize;
            let _ = connection.exchange(&blocks, &body, |d| received += d.len()).await;
        };
        let feed = async move {
            for piece in server.chunks(step.max(1)) {
                if to_client.write_all(piece).await.is_err() {
                    return;
                }
                tokio::task::yield_now().await;
            }
            let _ = to_client.shutdown().await;
        };
        tokio::join!(call(), call(), call(), feed);
    });
}
