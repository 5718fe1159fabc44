//! A connection's reader: reads a batch of frames in one system call and applies the whole ones
//! under one lock, waking calls only when their answer has data, ended or failed.
//!
//! The reads go into one buffer per runtime thread, shared by all the connections it serves: a
//! connection keeps only the start of a frame that has not all arrived. A buffer of its own, grown
//! to the largest reads, was most of what a busy connection's streams held
//! (bench/results/h2-stream-memory-2026-12-07.md); h2load reads into one buffer on the stack.

use super::error::H2Error;
use super::limits::{MAX_FRAME, READ_BUFFER};
use super::state::Shared;
use crate::h2client::frame::{self, Head};
use bytes::{Buf, BytesMut};
use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

thread_local! {
    /// This thread's read buffer; taken out while a read uses it (never across an await).
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

pub(super) async fn read_loop<R: AsyncRead>(shared: Arc<Shared>, read: R) {
    tokio::pin!(read);
    // The start of a frame not all read yet, between reads.
    let mut carry = BytesMut::new();
    loop {
        let read = poll_fn(|cx| read_batch(cx, read.as_mut(), &mut carry, &shared)).await;
        if !read {
            break;
        }
        let (wrote, broken) = {
            let st = shared.lock();
            (!st.out.is_empty(), st.closed == Some(H2Error::Broken))
        };
        if wrote {
            shared.flush.notify_one();
        }
        if broken {
            return; // the writer sends our GOAWAY, if any, and stops
        }
    }
    shared.lock().fail_all(&shared.usable);
    shared.flush.notify_one();
}

/// One read, and the frames it completed applied: false once the connection ended (closed or an
/// I/O error). Nothing is read when it returns Pending.
fn read_batch<R: AsyncRead>(
    cx: &mut Context<'_>,
    read: Pin<&mut R>,
    carry: &mut BytesMut,
    shared: &Shared,
) -> Poll<bool> {
    let wanted = if carry.len() >= frame::HEADER_LEN {
        frame::HEADER_LEN + Head::parse(&carry[..]).len.min(MAX_FRAME + 1) as usize
    } else {
        0
    };
    if wanted > READ_BUFFER / 2 {
        // A frame larger than half the shared buffer: read into its own bytes until it is whole.
        carry.reserve(wanted - carry.len());
        let n = {
            let mut buf = ReadBuf::uninit(carry.spare_capacity_mut());
            match read.poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(false),
                Poll::Ready(Ok(())) => buf.filled().len(),
            }
        };
        if n == 0 {
            return Poll::Ready(false);
        }
        // SAFETY: poll_read filled (initialised) the first `n` bytes of the spare capacity.
        unsafe { carry.set_len(carry.len() + n) };
        let used = apply(carry, shared);
        carry.advance(used);
        return Poll::Ready(true);
    }
    let mut buffer = BUFFER.with_borrow_mut(std::mem::take);
    buffer.resize(READ_BUFFER, 0);
    let kept = carry.len();
    buffer[..kept].copy_from_slice(carry);
    let n = {
        let mut buf = ReadBuf::new(&mut buffer[kept..]);
        match read.poll_read(cx, &mut buf) {
            Poll::Pending => 0,
            Poll::Ready(Err(_)) => usize::MAX,
            Poll::Ready(Ok(())) if buf.filled().is_empty() => usize::MAX,
            Poll::Ready(Ok(())) => buf.filled().len(),
        }
    };
    let result = match n {
        0 => Poll::Pending,
        usize::MAX => Poll::Ready(false),
        n => {
            let used = apply(&buffer[..kept + n], shared);
            carry.clear();
            carry.extend_from_slice(&buffer[used..kept + n]);
            Poll::Ready(true)
        }
    };
    BUFFER.with_borrow_mut(|b| *b = buffer);
    result
}

/// Applies the whole frames at the start of `bytes` under one lock: how many bytes they took. A
/// frame that breaks the protocol ends the connection (GOAWAY with its code); what follows it is
/// not read.
fn apply(bytes: &[u8], shared: &Shared) -> usize {
    let mut st = shared.lock();
    let mut at = 0;
    let mut result = Ok(());
    while bytes.len() - at >= frame::HEADER_LEN {
        let head = Head::parse(&bytes[at..]);
        if head.len > MAX_FRAME {
            result = Err(frame::FRAME_SIZE_ERROR);
            break;
        }
        let total = frame::HEADER_LEN + head.len as usize;
        if bytes.len() - at < total {
            break;
        }
        let first_goaway = head.kind == frame::GOAWAY && st.goaway_last == u32::MAX;
        result = st.on_frame(head, &bytes[at + frame::HEADER_LEN..at + total], &shared.usable);
        if first_goaway && st.goaway_last != u32::MAX {
            shared.goaways.fetch_add(1, Ordering::Relaxed);
        }
        at += total;
        if result.is_err() {
            break;
        }
    }
    if let Err(code) = result {
        st.protocol_error(code, &shared.usable);
        return bytes.len(); // nothing after a connection error is read
    }
    at
}
