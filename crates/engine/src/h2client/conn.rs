//! One HTTP/2 client connection: a reader task, a writer task and the state they share with the
//! calls. A call appends its pre-encoded HEADERS (and DATA) to the outgoing buffer and waits; the
//! writer sends everything queued in one write; the reader parses whole read batches under one
//! lock and wakes a call only when its answer has data, ended or failed. The state they share is
//! `state.rs`, its bounds `limits.rs`; the frames themselves are applied in `receive.rs`.

use super::block::{self, HeaderList, RequestBlocks};
use super::frame;
use bytes::Bytes;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

mod ended;
mod error;
mod limits;
mod read;
mod state;
mod streams;
pub use error::H2Error;
pub(crate) use limits::{CONNECTION_WINDOW, MAX_FRAME, MAX_HEADER_LIST, MAX_PENDING_OUT, STREAM_WINDOW};
use state::{Shared, Slot, State};

/// A complete answer: its head (`:status` and headers) and its trailers, if any.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderList,
    pub trailers: Option<HeaderList>,
}

/// Aborts the connection's tasks (closing its socket) when the last handle goes.
struct Tasks(Vec<AbortHandle>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// A handle on a connection; clones share it. The connection closes when the last one is dropped.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
    _tasks: Arc<Tasks>,
}

impl Connection {
    /// Starts HTTP/2 on an open stream (TLS already negotiated): sends the preface and our
    /// settings without waiting for the server's, as clients commonly do.
    pub fn start<S>(io: S) -> Connection
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        Connection::start_counted(io, Arc::default())
    }

    /// [`Connection::start`], adding 1 to `goaways` when the server sends its first GOAWAY.
    pub fn start_counted<S>(io: S, goaways: Arc<AtomicU64>) -> Connection
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        // The frames to write grow with what the calls queue (a few dozen bytes per request).
        let mut out = Vec::with_capacity(4 << 10);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (frame::SETTINGS_MAX_FRAME_SIZE, MAX_FRAME),
                (frame::SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST as u32),
            ],
        );
        frame::put_window_update(&mut out, 0, CONNECTION_WINDOW - frame::DEFAULT_WINDOW);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(out)),
            flush: Notify::new(),
            usable: AtomicBool::new(true),
            goaways,
        });
        shared.flush.notify_one();
        let (read, write) = tokio::io::split(io);
        let reader = tokio::spawn(read::read_loop(shared.clone(), read)).abort_handle();
        let writer = tokio::spawn(write_loop(shared.clone(), write)).abort_handle();
        Connection { shared, _tasks: Arc::new(Tasks(vec![reader, writer])) }
    }

    /// Waits for the server's first SETTINGS: the sign that the peer speaks HTTP/2. Fails with the
    /// reason when the connection ends first (an HTTP/1.1 server's answer to our preface breaks
    /// the framing).
    pub async fn settled(&self) -> Result<(), H2Error> {
        poll_fn(|cx| {
            let mut st = self.shared.lock();
            if st.settled {
                return Poll::Ready(Ok(()));
            }
            if let Some(e) = st.closed {
                return Poll::Ready(Err(e));
            }
            st.settling.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// Whether new calls can use this connection.
    pub fn is_usable(&self) -> bool {
        self.shared.usable.load(Ordering::Relaxed)
    }

    /// One call: sends the request's headers (and `body`, if any) on a new stream and reads the
    /// answer, giving each piece of body to `on_data` as it arrives. The first request sent puts
    /// its fields in the server's table; other requests on the connection send theirs literally.
    pub async fn exchange(
        &self,
        blocks: &RequestBlocks,
        body: &Bytes,
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<Answer, H2Error> {
        let mut stream = self.open(blocks, body, true).await?;
        loop {
            if let Some(answer) = stream.next(&mut on_data).await {
                return answer;
            }
        }
    }

    /// Opens a stream that sends its request in pieces ([`Stream::send`]): `body` goes first, and
    /// the request ends with it when `ends`. Its answer is read piece by piece ([`Stream::next`]).
    pub async fn open(&self, blocks: &RequestBlocks, body: &Bytes, ends: bool) -> Result<Stream<'_>, H2Error> {
        let id = poll_fn(|cx| self.open_stream(cx, blocks, body, ends, false)).await?;
        Ok(Stream { call: Call { shared: &self.shared, id, done: false }, chunk: Vec::new(), received: 0 })
    }

    /// One call whose answer's DATA is counted, not read: its bytes are given back to the server
    /// as they arrive and never copied, so a stream in flight holds no buffer for them. Returns
    /// the answer and the DATA bytes received (also when it failed).
    ///
    /// A future of its own, not an async fn: a fraction of the async fn's size, and every HTTP/2
    /// caller holds one (bench/results/h2-stream-memory-2026-12-07.md).
    pub fn count<'a>(&'a self, blocks: &'a RequestBlocks, body: &'a Bytes) -> Counted<'a> {
        Counted { conn: self, blocks, body, call: None, received: 0 }
    }

    fn open_stream(
        &self,
        cx: &mut Context<'_>,
        blocks: &RequestBlocks,
        body: &Bytes,
        ends: bool,
        counted: bool,
    ) -> Poll<Result<u32, H2Error>> {
        let mut st = self.shared.lock();
        if st.closed.is_some() {
            return Poll::Ready(Err(H2Error::Closed));
        }
        if st.open >= st.max_open {
            if !st.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                st.waiting.push(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let id = st.next_id;
        if id > frame::MAX_WINDOW {
            st.close(H2Error::GoAway, &self.shared.usable); // ids exhausted: the pool opens another connection
            return Poll::Ready(Err(H2Error::GoAway));
        }
        st.next_id += 2;
        st.open += 1;
        st.ended.opened(id);
        let max_frame = st.peer_max_frame;
        let update = st.table_update.take();
        let block = st.choose_block(blocks);
        match update {
            None => frame::put_headers(&mut st.out, id, block, ends && body.is_empty(), max_frame),
            Some(size) => {
                let mut with_update = Vec::with_capacity(block.len() + 6);
                block::put_table_size(&mut with_update, size);
                with_update.extend_from_slice(block);
                frame::put_headers(&mut st.out, id, &with_update, ends && body.is_empty(), max_frame);
            }
        }
        let slot = Slot {
            body: body.clone(),
            head_request: blocks.head_request,
            request_ends: ends,
            counted,
            send_window: st.peer_initial_window,
            recv_window: i64::from(STREAM_WINDOW),
            ..Slot::default()
        };
        st.streams.insert(id, slot);
        if !body.is_empty() {
            st.sending.push_back(id);
            st.pump();
        }
        drop(st);
        self.shared.flush.notify_one();
        Poll::Ready(Ok(id))
    }
}

/// A stream whose request goes out in pieces while its answer comes in; dropping it before the
/// answer ended resets it.
pub struct Stream<'a> {
    call: Call<'a>,
    chunk: Vec<u8>,
    /// DATA bytes of the answer received so far.
    received: u64,
}

impl Stream<'_> {
    /// Queues `piece` of the request body, ending the request after it when `ends`. A stream the
    /// server already ended (or that failed) takes nothing: its answer tells why.
    pub fn send(&self, piece: Bytes, ends: bool) {
        {
            let mut guard = self.call.shared.lock();
            let st = &mut *guard;
            let Some(slot) = st.streams.get_mut(&self.call.id).filter(|s| !s.finished() && !s.request_ends) else {
                return;
            };
            let idle = !slot.body_left();
            if !piece.is_empty() {
                slot.queued.get_or_insert_default().push_back(piece);
            }
            slot.request_ends = ends;
            if idle && (ends || !slot.nothing_queued()) {
                st.sending.push_back(self.call.id);
            }
            st.pump();
        }
        self.call.shared.flush.notify_one();
    }

    /// The answer's head (`:status` and headers) once it came, before the answer ends.
    pub fn head(&self) -> Option<HeaderList> {
        self.call.shared.lock().streams.get(&self.call.id).and_then(|slot| slot.head.clone())
    }

    /// Waits for the next piece of the answer: gives its data to `on_data` and returns None, or
    /// returns the answer once it ended (or failed).
    pub async fn next(&mut self, on_data: &mut impl FnMut(&[u8])) -> Option<Result<Answer, H2Error>> {
        let step = poll_fn(|cx| self.call.poll(cx, &mut self.chunk, &mut self.received)).await;
        if !self.chunk.is_empty() {
            on_data(&self.chunk);
            self.chunk.clear();
        }
        if step.is_some() {
            self.call.done = true;
        }
        step
    }
}

/// A counted call ([`Connection::count`]): its stream once opened, and the DATA bytes so far.
pub struct Counted<'a> {
    conn: &'a Connection,
    blocks: &'a RequestBlocks,
    body: &'a Bytes,
    call: Option<Call<'a>>,
    received: u64,
}

impl std::future::Future for Counted<'_> {
    type Output = (Result<Answer, H2Error>, u64);

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.call.is_none() {
            match this.conn.open_stream(cx, this.blocks, this.body, true, true) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready((Err(e), 0)),
                Poll::Ready(Ok(id)) => this.call = Some(Call { shared: &this.conn.shared, id, done: false }),
            }
        }
        let call = this.call.as_mut().expect("opened above");
        loop {
            // A counted stream's DATA is never kept, so no chunk comes back; one would be dropped.
            let mut chunk = Vec::new();
            match call.poll(cx, &mut chunk, &mut this.received) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(answer)) => {
                    call.done = true;
                    return Poll::Ready((answer, this.received));
                }
                Poll::Ready(None) => continue,
            }
        }
    }
}

/// A call in progress; dropping it before its answer (a timeout) resets its stream.
struct Call<'a> {
    shared: &'a Shared,
    id: u32,
    done: bool,
}

impl Call<'_> {
    /// Moves received data into `chunk` and the count of DATA bytes so far into `received`; Some
    /// when the answer is complete or failed.
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        chunk: &mut Vec<u8>,
        received: &mut u64,
    ) -> Poll<Option<Result<Answer, H2Error>>> {
        let mut st = self.shared.lock();
        let st = &mut *st;
        let Some(slot) = st.streams.get_mut(&self.id) else {
            return Poll::Ready(Some(Err(H2Error::Broken)));
        };
        let mut updated = false;
        *received = slot.received;
        if !slot.data.is_empty() {
            std::mem::swap(&mut slot.data, chunk);
            let n = chunk.len() as u32;
            st.recv_unacked += n;
            if !slot.finished() {
                slot.unacked += n;
                updated = slot.give_back(&mut st.out, self.id);
            }
        }
        let outcome = if let Some(e) = slot.error {
            Some(Err(e))
        } else if slot.ended {
            Some(match slot.head.take() {
                Some(headers) => Ok(Answer {
                    status: headers.status().unwrap_or(0),
                    headers,
                    trailers: slot.trailers.take().map(|t| *t),
                }),
                None => Err(H2Error::Broken),
            })
        } else {
            None
        };
        if outcome.is_some() {
            st.streams.remove(&self.id);
        } else if chunk.is_empty() {
            slot.waker = Some(cx.waker().clone());
        }
        updated |= st.give_back();
        if updated {
            self.shared.flush.notify_one();
        }
        match outcome {
            None if chunk.is_empty() => Poll::Pending,
            outcome => Poll::Ready(outcome),
        }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut st = self.shared.lock();
        let st = &mut *st;
        let Some(slot) = st.streams.remove(&self.id) else { return };
        st.recv_unacked += slot.data.len() as u32;
        if !slot.finished() {
            frame::put_rst_stream(&mut st.out, self.id, frame::CANCEL);
            st.sending.retain(|&s| s != self.id);
            st.stream_closed();
        }
        st.give_back();
        self.shared.flush.notify_one();
    }
}

async fn write_loop<W: AsyncWrite>(shared: Arc<Shared>, write: W) {
    tokio::pin!(write);
    let mut batch = Vec::new(); // swapped with the state's: both grow to the largest batch
    loop {
        let broken = {
            let mut st = shared.lock();
            std::mem::swap(&mut st.out, &mut batch);
            st.closed == Some(H2Error::Broken)
        };
        if batch.is_empty() {
            if broken {
                let _ = write.shutdown().await;
                return;
            }
            shared.flush.notified().await;
            // Let the other calls that are ready run first: their frames join this write.
            tokio::task::yield_now().await;
            continue;
        }
        let sent = write.write_all(&batch).await.is_ok() && write.flush().await.is_ok();
        batch.clear();
        if !sent {
            shared.lock().fail_all(&shared.usable);
            return;
        }
    }
}

mod receive;
#[cfg(test)]
mod tests;
