//! A server's bytes as a socket would give them, in pieces, to code that reads a stream; and a
//! way to run that code when every read is already satisfied.

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The size of the pieces bytes arrive in: `step`, but at most 65,536 pieces, so that an input
/// expanded to megabytes is read in a time the fuzzer can afford.
pub(super) fn piece_size(step: usize, len: usize) -> usize {
    step.max(len >> 16).max(1)
}

/// A server's bytes as a socket would give them: `step` at a time, then the end of the stream.
/// What the client writes is dropped.
pub struct Pieces<'a> {
    data: &'a [u8],
    step: usize,
}

impl<'a> Pieces<'a> {
    pub fn new(data: &'a [u8], step: usize) -> Self {
        Pieces { data, step: piece_size(step, data.len()) }
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
pub(super) fn at_once<F: Future>(f: F) -> F::Output {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("waited on a stream that had ended"),
    }
}
