//! A socket wrapper that counts the bytes it moves: what the wire carried, TLS records and protocol
//! framing included, because it sits below both.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::target::WireTotals;

/// Totals shared by every connection of a target. Relaxed atomics: one add per read or write call.
#[derive(Debug, Default)]
pub struct WireCounter {
    sent: AtomicU64,
    received: AtomicU64,
}

impl WireCounter {
    pub fn totals(&self) -> WireTotals {
        WireTotals { sent: self.sent.load(Ordering::Relaxed), received: self.received.load(Ordering::Relaxed) }
    }
}

pub struct Counted<S> {
    inner: S,
    counter: Arc<WireCounter>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, counter: Arc<WireCounter>) -> Self {
        Counted { inner, counter }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        if n > 0 {
            self.counter.received.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = poll {
            self.counter.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = poll {
            self.counter.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn counts_both_directions() {
        let (a, mut b) = tokio::io::duplex(64);
        let counter = Arc::new(WireCounter::default());
        let mut counted = Counted::new(a, counter.clone());
        counted.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        b.read_exact(&mut buf).await.unwrap();
        b.write_all(b"answer!").await.unwrap();
        let mut got = [0u8; 7];
        counted.read_exact(&mut got).await.unwrap();
        assert_eq!(counter.totals(), WireTotals { sent: 5, received: 7 });
    }
}
