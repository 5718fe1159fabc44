//! One HTTP/2 client connection: a reader task, a writer task and the state they share with the
//! calls. A call appends its pre-encoded HEADERS (and DATA) to the outgoing buffer and waits; the
//! writer sends everything queued in one write; the reader parses whole read batches under one
//! lock and wakes a call only when its answer has data, ended or failed (the frames themselves are
//! applied in `receive.rs`).

use super::block::{self, HeaderList, RequestBlocks};
use super::frame::{self, Head};
use bytes::{Buf, Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

mod ended;
mod error;
use ended::EndedStreams;
pub use error::H2Error;

/// Windows large enough that a 1 MB answer never waits for a WINDOW_UPDATE round trip.
pub(crate) const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;
/// The largest frame we accept (advertised in SETTINGS_MAX_FRAME_SIZE).
pub(crate) const MAX_FRAME: u32 = 1 << 20;
/// A connection reads into a buffer of this size at first, and doubles a read's size when it fills
/// all it was offered, up to MAX_READ: a connection with few streams in flight holds kilobytes, a
/// busy one reads many answers in one system call.
const FIRST_READ: usize = 16 << 10;
const MAX_READ: usize = 64 << 10;
/// Streams we open before the server's SETTINGS say how many it allows (RFC 9113 §6.5.2
/// recommends servers allow at least 100).
const ASSUMED_MAX_STREAMS: usize = 100;
/// Header lists (decoded, counted as RFC 9113 §6.5.2 does: 32 bytes per field besides its name
/// and value) and header blocks (encoded) larger than this end the connection.
pub(crate) const MAX_HEADER_LIST: usize = 1 << 20;
/// Frames waiting for the writer beyond this (acknowledgements of SETTINGS and PINGs a server
/// floods us with while not reading) end the connection with ENHANCE_YOUR_CALM.
pub(crate) const MAX_PENDING_OUT: usize = 16 << 20;

/// A complete answer: its head (`:status` and headers) and its trailers, if any.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderList,
    pub trailers: Option<HeaderList>,
}

/// Stream ids are consecutive odd numbers: hashing them is a waste.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u32 keys")
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[derive(Default)]
struct Slot {
    head: Option<HeaderList>,
    trailers: Option<HeaderList>,
    /// DATA received and not yet taken by the call.
    data: Vec<u8>,
    /// Request body still to send, from `body_at`, then the pieces queued after it.
    body: Bytes,
    body_at: usize,
    queued: VecDeque<Bytes>,
    /// The request ends (END_STREAM) once the body queued so far is sent.
    request_ends: bool,
    send_window: i64,
    /// DATA the server may still send on this stream before our next WINDOW_UPDATE.
    recv_window: i64,
    /// Bytes the call consumed that the server has not been given back yet (stream level).
    unacked: u32,
    /// The server ended the stream (END_STREAM) or it failed.
    ended: bool,
    error: Option<H2Error>,
    waker: Option<Waker>,
}

impl Slot {
    fn finished(&self) -> bool {
        self.ended || self.error.is_some()
    }

    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// A header block being received over HEADERS and CONTINUATION frames.
struct Partial {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// How this connection's requests use the server's HPACK dynamic table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// The first request has not been sent: it adds the fields.
    Unused,
    /// The fields of the request with this id are in the table: it names them by index.
    Filled(u64),
    /// The table cannot hold them: literal fields only.
    Off,
}

struct State {
    /// Frames waiting for the writer.
    out: Vec<u8>,
    table: Table,
    /// Our encoder's table size: the default until the server's SETTINGS lower it.
    table_max: u32,
    /// A lowered table size to announce at the start of the next header block (RFC 7541 §4.2).
    table_update: Option<u32>,
    streams: HashMap<u32, Slot, BuildHasherDefault<IdHasher>>,
    next_id: u32,
    /// Streams open in the protocol's sense (counted against the server's limit).
    open: usize,
    max_open: usize,
    /// Calls waiting for the server's stream limit to allow another stream.
    waiting: Vec<Waker>,
    /// Whether the server's first SETTINGS came, and who waits for them ([`Connection::settled`]).
    settled: bool,
    settling: Vec<Waker>,
    peer_initial_window: i64,
    send_window: i64,
    peer_max_frame: usize,
    /// Streams with request body left to send, in order.
    sending: VecDeque<u32>,
    /// Bytes consumed (or discarded) that the server has not been given back yet (connection level).
    recv_unacked: u32,
    /// DATA the server may still send on the connection before our next WINDOW_UPDATE.
    recv_window: i64,
    /// Why no new stream can start (GOAWAY, broken connection, ids exhausted).
    closed: Option<H2Error>,
    /// Streams above this id were not processed by a server that sent GOAWAY.
    goaway_last: u32,
    hpack: super::hpack::Decoder,
    partial: Option<Partial>,
    /// How the recent streams ended, for frames that come after their call is gone.
    ended: EndedStreams,
}

impl State {
    /// A connection's state before any frame arrived; `out` holds what we send first.
    fn new(out: Vec<u8>) -> State {
        State {
            out,
            table: Table::Unused,
            table_max: block::DEFAULT_TABLE_SIZE,
            table_update: None,
            streams: HashMap::default(),
            next_id: 1,
            open: 0,
            max_open: ASSUMED_MAX_STREAMS,
            waiting: vec![],
            settled: false,
            settling: vec![],
            peer_initial_window: i64::from(frame::DEFAULT_WINDOW),
            send_window: i64::from(frame::DEFAULT_WINDOW),
            peer_max_frame: frame::DEFAULT_MAX_FRAME as usize,
            sending: VecDeque::new(),
            recv_unacked: 0,
            recv_window: i64::from(CONNECTION_WINDOW),
            closed: None,
            goaway_last: u32::MAX,
            hpack: super::hpack::Decoder::default(),
            partial: None,
            ended: EndedStreams::default(),
        }
    }
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
        let id = poll_fn(|cx| self.open_stream(cx, blocks, body, ends)).await?;
        Ok(Stream { call: Call { shared: &self.shared, id, done: false }, chunk: Vec::new() })
    }

    fn open_stream(
        &self,
        cx: &mut Context<'_>,
        blocks: &RequestBlocks,
        body: &Bytes,
        ends: bool,
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
            request_ends: ends,
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
        let step = poll_fn(|cx| self.call.poll(cx, &mut self.chunk)).await;
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
    /// Moves received data into `chunk`; Some when the answer is complete or failed.
    fn poll(&mut self, cx: &mut Context<'_>, chunk: &mut Vec<u8>) -> Poll<Option<Result<Answer, H2Error>>> {
        let mut st = self.shared.lock();
        let st = &mut *st;
        let Some(slot) = st.streams.get_mut(&self.id) else {
            return Poll::Ready(Some(Err(H2Error::Broken)));
        };
        let mut updated = false;
        if !slot.data.is_empty() {
            std::mem::swap(&mut slot.data, chunk);
            let n = chunk.len() as u32;
            st.recv_unacked += n;
            if !slot.finished() {
                slot.unacked += n;
                if slot.unacked >= STREAM_WINDOW / 2 {
                    frame::put_window_update(&mut st.out, self.id, slot.unacked);
                    slot.recv_window += i64::from(slot.unacked);
                    slot.unacked = 0;
                    updated = true;
                }
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

impl State {
    /// The form of the request's header block this request sends (see [`Table`]).
    fn choose_block<'b>(&mut self, blocks: &'b RequestBlocks) -> &'b [u8] {
        if blocks.table_size > self.table_max {
            self.table = Table::Off; // evicted by a smaller table, or never fitting
        }
        match self.table {
            Table::Unused => {
                self.table = Table::Filled(blocks.id);
                &blocks.first
            }
            Table::Filled(id) if id == blocks.id => &blocks.repeat,
            Table::Filled(_) | Table::Off => &blocks.literal, // another request's fields fill it
        }
    }

    /// A stream left the open state: a waiting call may open one.
    fn stream_closed(&mut self) {
        self.open -= 1;
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    /// Gives the connection window back once half of it was consumed.
    fn give_back(&mut self) -> bool {
        if self.recv_unacked >= CONNECTION_WINDOW / 2 {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
            return true;
        }
        false
    }

    /// Sends as much request body as the flow-control windows allow, and the END_STREAM of
    /// requests whose body is all sent.
    fn pump(&mut self) {
        let mut i = 0;
        while i < self.sending.len() {
            let id = self.sending[i];
            let Some(slot) = self.streams.get_mut(&id) else {
                self.sending.remove(i);
                continue;
            };
            if slot.body_at == slot.body.len() {
                if let Some(next) = slot.queued.pop_front() {
                    slot.body = next;
                    slot.body_at = 0;
                    continue;
                }
                if slot.request_ends {
                    frame::put_data(&mut self.out, id, &[], true); // the request ends after its last piece
                }
                slot.body = Bytes::new();
                slot.body_at = 0;
                self.sending.remove(i); // sent all: back when more is queued
                continue;
            }
            if self.send_window <= 0 {
                break;
            }
            let left = slot.body.len() - slot.body_at;
            let n = left.min(self.peer_max_frame).min(self.send_window.min(slot.send_window).max(0) as usize);
            if n == 0 {
                i += 1; // this stream's window is closed; others may go on
                continue;
            }
            let end = slot.body_at + n == slot.body.len() && slot.queued.is_empty() && slot.request_ends;
            frame::put_data(&mut self.out, id, &slot.body[slot.body_at..slot.body_at + n], end);
            slot.body_at += n;
            slot.send_window -= n as i64;
            self.send_window -= n as i64;
            if end {
                slot.body = Bytes::new();
                slot.body_at = 0;
                self.sending.remove(i);
            }
        }
    }

    /// No new streams from now on; `e` for the calls still waiting for an answer.
    fn close(&mut self, e: H2Error, usable: &AtomicBool) {
        usable.store(false, Ordering::Relaxed);
        if self.closed.is_none() || e == H2Error::Broken {
            self.closed = Some(e);
        }
        for w in self.waiting.drain(..).chain(self.settling.drain(..)) {
            w.wake();
        }
    }

    /// The connection is gone: every call still waiting fails.
    fn fail_all(&mut self, usable: &AtomicBool) {
        self.fail_all_with(H2Error::Broken, usable);
    }

    fn fail_all_with(&mut self, e: H2Error, usable: &AtomicBool) {
        self.close(H2Error::Broken, usable);
        for slot in self.streams.values_mut() {
            if !slot.finished() {
                slot.error = Some(e);
                slot.wake();
            }
        }
    }

    /// A connection error we detected: tell the server why, then stop; the calls still waiting
    /// fail as the server's protocol error. Every violation ends the connection (RFC 9113 §5.4.1
    /// lets an endpoint end one at any time): a server that broke it once is not measured further
    /// on it.
    fn protocol_error(&mut self, code: u32, usable: &AtomicBool) {
        let last = self.next_id.saturating_sub(2);
        frame::put_goaway(&mut self.out, last, code);
        self.fail_all_with(H2Error::Protocol, usable);
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
