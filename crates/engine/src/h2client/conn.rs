//! One HTTP/2 client connection: a reader task, a writer task and the state they share with the
//! calls. A call appends its pre-encoded HEADERS (and DATA) to the outgoing buffer and waits; the
//! writer sends everything queued in one write; the reader parses whole read batches under one
//! lock and wakes a call only when its answer has data, ended or failed. The state they share is
//! `state.rs`, its bounds `limits.rs`; the frames themselves are applied in `receive.rs`.

use super::block::{self, HeaderList, RequestBlocks};
use super::frame::{self, Head};
use bytes::{Buf, Bytes, BytesMut};
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

mod ended;
mod error;
mod limits;
mod state;
pub use error::H2Error;
pub(crate) use limits::{CONNECTION_WINDOW, MAX_FRAME, MAX_HEADER_LIST, MAX_PENDING_OUT, STREAM_WINDOW};
use limits::{FIRST_READ, MAX_READ};
use state::{Slot, State};

/// A complete answer: its head (`:status` and headers) and its trailers, if any.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderList,
    pub trailers: Option<HeaderList>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer when `out` has frames.
    flush: Notify,
    /// False once the connection takes no new streams (read without the lock by the pool).
    usable: AtomicBool,
    /// Counts the connections of a pool that received a GOAWAY (each once).
    goaways: Arc<AtomicU64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
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
        let reader = tokio::spawn(read_loop(shared.clone(), read)).abort_handle();
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
    pub async fn count(&self, blocks: &RequestBlocks, body: &Bytes) -> (Result<Answer, H2Error>, u64) {
        let id = match poll_fn(|cx| self.open_stream(cx, blocks, body, true, true)).await {
            Ok(id) => id,
            Err(e) => return (Err(e), 0),
        };
        let mut stream =
            Stream { call: Call { shared: &self.shared, id, done: false }, chunk: Vec::new(), received: 0 };
        loop {
            if let Some(answer) = stream.next(&mut |_: &[u8]| {}).await {
                return (answer, stream.received);
            }
        }
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
            let idle = slot.body_at == slot.body.len() && slot.queued.is_empty();
            if !piece.is_empty() {
                slot.queued.push_back(piece);
            }
            slot.request_ends = ends;
            if idle && (ends || !slot.queued.is_empty()) {
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
                Some(headers) => {
                    Ok(Answer { status: headers.status().unwrap_or(0), headers, trailers: slot.trailers.take() })
                }
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

async fn read_loop<R: AsyncRead>(shared: Arc<Shared>, read: R) {
    tokio::pin!(read);
    let mut buf = BytesMut::with_capacity(FIRST_READ);
    let mut read_size = FIRST_READ;
    loop {
        if buf.capacity() - buf.len() < read_size / 2 {
            buf.reserve(read_size);
        }
        let offered = buf.capacity() - buf.len();
        match read.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) if n == offered => read_size = (read_size * 2).min(MAX_READ),
            Ok(_) => {}
        }
        let mut st = shared.lock();
        let mut result = Ok(());
        while buf.len() >= frame::HEADER_LEN {
            let head = Head::parse(&buf);
            if head.len > MAX_FRAME {
                result = Err(frame::FRAME_SIZE_ERROR);
                break;
            }
            let total = frame::HEADER_LEN + head.len as usize;
            if buf.len() < total {
                buf.reserve(total - buf.len());
                break;
            }
            let first_goaway = head.kind == frame::GOAWAY && st.goaway_last == u32::MAX;
            result = st.on_frame(head, &buf[frame::HEADER_LEN..total], &shared.usable);
            if first_goaway && st.goaway_last != u32::MAX {
                shared.goaways.fetch_add(1, Ordering::Relaxed);
            }
            buf.advance(total);
            if result.is_err() {
                break;
            }
        }
        if let Err(code) = result {
            st.protocol_error(code, &shared.usable);
        }
        let wrote = !st.out.is_empty();
        let broken = st.closed == Some(H2Error::Broken);
        drop(st);
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
