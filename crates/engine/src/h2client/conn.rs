//! One HTTP/2 client connection: a reader task, a writer task and the state they share with the
//! calls. A call appends its pre-encoded HEADERS (and DATA) to the outgoing buffer and waits; the
//! writer sends everything queued in one write; the reader parses whole read batches under one
//! lock and wakes a call only when its answer has data, ended or failed.

use super::block::{self, HeaderList, RequestBlocks};
use super::frame::{self, Head};
use bytes::{Buf, Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

/// Windows large enough that a 1 MB answer never waits for a WINDOW_UPDATE round trip.
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;
/// The largest frame we accept (advertised in SETTINGS_MAX_FRAME_SIZE).
const MAX_FRAME: u32 = 1 << 20;
/// Streams we open before the server's SETTINGS say how many it allows (RFC 9113 §6.5.2
/// recommends servers allow at least 100).
const ASSUMED_MAX_STREAMS: usize = 100;
/// Headers (decoded) and header blocks (encoded) larger than this end the connection.
const MAX_HEADER_LIST: usize = 1 << 20;

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Error {
    /// The server reset this stream (RST_STREAM with this code); the connection goes on.
    Reset(u32),
    /// The server is going away (GOAWAY) and did not take this stream, or the stream ids ran out.
    GoAway,
    /// The connection broke (closed, I/O error, protocol or compression error).
    Broken,
}

impl H2Error {
    /// Whether the connection can take further calls.
    pub fn connection_survives(self) -> bool {
        matches!(self, H2Error::Reset(_))
    }
}

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
    /// Request body still to send, from `body_at`.
    body: Bytes,
    body_at: usize,
    send_window: i64,
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
    peer_initial_window: i64,
    send_window: i64,
    peer_max_frame: usize,
    /// Streams with request body left to send, in order.
    sending: VecDeque<u32>,
    /// Bytes consumed (or discarded) that the server has not been given back yet (connection level).
    recv_unacked: u32,
    /// Why no new stream can start (GOAWAY, broken connection, ids exhausted).
    closed: Option<H2Error>,
    /// Streams above this id were not processed by a server that sent GOAWAY.
    goaway_last: u32,
    hpack: super::hpack::Decoder,
    partial: Option<Partial>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer when `out` has frames.
    flush: Notify,
    /// False once the connection takes no new streams (read without the lock by the pool).
    usable: AtomicBool,
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
        let mut out = Vec::with_capacity(64 << 10);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (frame::SETTINGS_MAX_FRAME_SIZE, MAX_FRAME),
            ],
        );
        frame::put_window_update(&mut out, 0, CONNECTION_WINDOW - frame::DEFAULT_WINDOW);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                out,
                table: Table::Unused,
                table_max: block::DEFAULT_TABLE_SIZE,
                table_update: None,
                streams: HashMap::default(),
                next_id: 1,
                open: 0,
                max_open: ASSUMED_MAX_STREAMS,
                waiting: vec![],
                peer_initial_window: i64::from(frame::DEFAULT_WINDOW),
                send_window: i64::from(frame::DEFAULT_WINDOW),
                peer_max_frame: frame::DEFAULT_MAX_FRAME as usize,
                sending: VecDeque::new(),
                recv_unacked: 0,
                closed: None,
                goaway_last: u32::MAX,
                hpack: super::hpack::Decoder::default(),
                partial: None,
            }),
            flush: Notify::new(),
            usable: AtomicBool::new(true),
        });
        shared.flush.notify_one();
        let (read, write) = tokio::io::split(io);
        let reader = tokio::spawn(read_loop(shared.clone(), read)).abort_handle();
        let writer = tokio::spawn(write_loop(shared.clone(), write)).abort_handle();
        Connection { shared, _tasks: Arc::new(Tasks(vec![reader, writer])) }
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
        let id = poll_fn(|cx| self.open_stream(cx, blocks, body)).await?;
        let mut call = Call { shared: &self.shared, id, done: false };
        let mut chunk = Vec::new();
        loop {
            let step = poll_fn(|cx| call.poll(cx, &mut chunk)).await;
            if !chunk.is_empty() {
                on_data(&chunk);
                chunk.clear();
            }
            if let Some(answer) = step {
                call.done = true;
                return answer;
            }
        }
    }

    fn open_stream(&self, cx: &mut Context<'_>, blocks: &RequestBlocks, body: &Bytes) -> Poll<Result<u32, H2Error>> {
        let mut st = self.shared.lock();
        if let Some(e) = st.closed {
            return Poll::Ready(Err(if e == H2Error::Broken { e } else { H2Error::GoAway }));
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
        let max_frame = st.peer_max_frame;
        let update = st.table_update.take();
        let block = st.choose_block(blocks);
        match update {
            None => frame::put_headers(&mut st.out, id, block, body.is_empty(), max_frame),
            Some(size) => {
                let mut with_update = Vec::with_capacity(block.len() + 6);
                block::put_table_size(&mut with_update, size);
                with_update.extend_from_slice(block);
                frame::put_headers(&mut st.out, id, &with_update, body.is_empty(), max_frame);
            }
        }
        let slot = Slot { body: body.clone(), send_window: st.peer_initial_window, ..Slot::default() };
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
            self.recv_unacked = 0;
            return true;
        }
        false
    }

    /// Sends as much request body as the flow-control windows allow.
    fn pump(&mut self) {
        let mut i = 0;
        while i < self.sending.len() && self.send_window > 0 {
            let id = self.sending[i];
            let Some(slot) = self.streams.get_mut(&id) else {
                self.sending.remove(i);
                continue;
            };
            let left = slot.body.len() - slot.body_at;
            let n = left.min(self.peer_max_frame).min(self.send_window.min(slot.send_window).max(0) as usize);
            if n == 0 && left > 0 {
                i += 1; // this stream's window is closed; others may go on
                continue;
            }
            let end = slot.body_at + n == slot.body.len();
            frame::put_data(&mut self.out, id, &slot.body[slot.body_at..slot.body_at + n], end);
            slot.body_at += n;
            slot.send_window -= n as i64;
            self.send_window -= n as i64;
            if end {
                slot.body = Bytes::new();
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
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    /// The connection is gone: every call still waiting fails.
    fn fail_all(&mut self, usable: &AtomicBool) {
        self.close(H2Error::Broken, usable);
        for slot in self.streams.values_mut() {
            if !slot.finished() {
                slot.error = Some(H2Error::Broken);
                slot.wake();
            }
        }
    }

    /// A connection error we detected: tell the server why, then stop.
    fn protocol_error(&mut self, code: u32, usable: &AtomicBool) {
        let last = self.next_id.saturating_sub(2);
        frame::put_goaway(&mut self.out, last, code);
        self.fail_all(usable);
    }

    /// Handles one frame; Err(code) is a connection error.
    fn on_frame(&mut self, head: Head, payload: &[u8], usable: &AtomicBool) -> Result<(), u32> {
        if let Some(p) = &self.partial {
            if head.kind != frame::CONTINUATION || head.stream != p.stream {
                return Err(frame::PROTOCOL_ERROR);
            }
        }
        match head.kind {
            frame::DATA => self.on_data(head, payload),
            frame::HEADERS => {
                let block = frame::unpadded(&head, payload).ok_or(frame::PROTOCOL_ERROR)?;
                let end_stream = head.has(frame::END_STREAM);
                if head.has(frame::END_HEADERS) {
                    return self.on_block(head.stream, end_stream, block);
                }
                self.partial = Some(Partial { stream: head.stream, end_stream, block: block.to_vec() });
                Ok(())
            }
            frame::CONTINUATION => {
                let p = self.partial.as_mut().ok_or(frame::PROTOCOL_ERROR)?;
                p.block.extend_from_slice(payload);
                if p.block.len() > MAX_HEADER_LIST {
                    return Err(frame::PROTOCOL_ERROR);
                }
                if head.has(frame::END_HEADERS) {
                    let p = self.partial.take().expect("checked above");
                    return self.on_block(p.stream, p.end_stream, &p.block);
                }
                Ok(())
            }
            frame::RST_STREAM => {
                let code = frame::word(payload).ok_or(frame::FRAME_SIZE_ERROR)?;
                if let Some(slot) = self.streams.get_mut(&head.stream) {
                    if !slot.finished() {
                        slot.error = Some(H2Error::Reset(code));
                        slot.wake();
                        self.sending.retain(|&s| s != head.stream);
                        self.stream_closed();
                    }
                }
                Ok(())
            }
            frame::SETTINGS => {
                if head.has(frame::ACK) {
                    return Ok(());
                }
                for (id, value) in frame::settings(payload).ok_or(frame::FRAME_SIZE_ERROR)? {
                    match id {
                        frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                            self.max_open = value as usize;
                            for w in self.waiting.drain(..) {
                                w.wake();
                            }
                        }
                        frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                            if value > frame::MAX_WINDOW {
                                return Err(frame::FLOW_CONTROL_ERROR);
                            }
                            let delta = i64::from(value) - self.peer_initial_window;
                            self.peer_initial_window = i64::from(value);
                            for slot in self.streams.values_mut() {
                                slot.send_window += delta;
                            }
                        }
                        frame::SETTINGS_MAX_FRAME_SIZE => {
                            if !(frame::DEFAULT_MAX_FRAME..=(1 << 24) - 1).contains(&value) {
                                return Err(frame::PROTOCOL_ERROR);
                            }
                            self.peer_max_frame = value as usize;
                        }
                        frame::SETTINGS_HEADER_TABLE_SIZE if value < self.table_max => {
                            self.table_max = value;
                            self.table_update = Some(value);
                        }
                        _ => {} // the others do not concern a client
                    }
                }
                frame::put_settings_ack(&mut self.out);
                self.pump();
                Ok(())
            }
            frame::PING => {
                if payload.len() != 8 {
                    return Err(frame::FRAME_SIZE_ERROR);
                }
                if !head.has(frame::ACK) {
                    frame::put_ping_ack(&mut self.out, payload);
                }
                Ok(())
            }
            frame::GOAWAY => {
                let last = frame::word(payload).ok_or(frame::FRAME_SIZE_ERROR)? & frame::MAX_WINDOW;
                self.goaway_last = self.goaway_last.min(last);
                self.close(H2Error::GoAway, usable);
                let mut refused = 0;
                for (&id, slot) in self.streams.iter_mut() {
                    if id > last && !slot.finished() {
                        slot.error = Some(H2Error::GoAway);
                        slot.wake();
                        refused += 1;
                    }
                }
                for _ in 0..refused {
                    self.stream_closed();
                }
                Ok(())
            }
            frame::WINDOW_UPDATE => {
                let inc = i64::from(frame::word(payload).ok_or(frame::FRAME_SIZE_ERROR)? & frame::MAX_WINDOW);
                if head.stream == 0 {
                    self.send_window += inc;
                    if self.send_window > i64::from(frame::MAX_WINDOW) {
                        return Err(frame::FLOW_CONTROL_ERROR);
                    }
                } else if let Some(slot) = self.streams.get_mut(&head.stream) {
                    slot.send_window += inc;
                }
                self.pump();
                Ok(())
            }
            frame::PUSH_PROMISE => Err(frame::PROTOCOL_ERROR), // we disabled push
            _ => Ok(()),                                       // PRIORITY and unknown types are ignored
        }
    }

    fn on_data(&mut self, head: Head, payload: &[u8]) -> Result<(), u32> {
        let data = frame::unpadded(&head, payload).ok_or(frame::PROTOCOL_ERROR)?;
        let padding = (payload.len() - data.len()) as u32;
        match self.streams.get_mut(&head.stream) {
            Some(slot) if !slot.finished() => {
                if slot.head.is_none() {
                    return Err(frame::PROTOCOL_ERROR); // data before the answer's head
                }
                self.recv_unacked += padding;
                slot.unacked += padding;
                slot.data.extend_from_slice(data);
                let end = head.has(frame::END_STREAM);
                if !end {
                    slot.wake();
                }
                if end {
                    self.end_stream(head.stream);
                }
            }
            // A stream we reset or already answered: its bytes still count against the connection.
            _ => self.recv_unacked += payload.len() as u32,
        }
        self.give_back();
        Ok(())
    }

    /// A complete header block: decoded (always, to keep the decoder's table in step) and given
    /// to its stream as the answer's head, an informational head (dropped) or its trailers.
    fn on_block(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Result<(), u32> {
        let mut list = HeaderList::default();
        let mut too_big = false;
        self.hpack
            .decode(block, |name, value| {
                if list.size() + name.len() + value.len() > MAX_HEADER_LIST {
                    too_big = true;
                } else {
                    list.push(name, value);
                }
            })
            .map_err(|_| frame::COMPRESSION_ERROR)?;
        if too_big {
            return Err(frame::PROTOCOL_ERROR);
        }
        let Some(slot) = self.streams.get_mut(&stream) else { return Ok(()) };
        if slot.finished() {
            return Ok(());
        }
        if slot.head.is_none() {
            match list.status() {
                Some(100..=199) if !end_stream => return Ok(()), // informational: the real head follows
                Some(_) => slot.head = Some(list),
                None => return Err(frame::PROTOCOL_ERROR),
            }
        } else if end_stream {
            slot.trailers = Some(list);
        } else {
            return Err(frame::PROTOCOL_ERROR); // a second head without END_STREAM
        }
        if end_stream {
            self.end_stream(stream);
        }
        Ok(())
    }

    /// The server finished its answer on `id`.
    fn end_stream(&mut self, id: u32) {
        let Some(slot) = self.streams.get_mut(&id) else { return };
        slot.ended = true;
        slot.wake();
        if slot.body_at < slot.body.len() {
            // Answered before reading all of the request: stop sending it (RFC 9113 §8.1).
            slot.body = Bytes::new();
            slot.body_at = 0;
            self.sending.retain(|&s| s != id);
            frame::put_rst_stream(&mut self.out, id, frame::CANCEL);
        }
        self.stream_closed();
    }
}

async fn read_loop<R: AsyncRead>(shared: Arc<Shared>, read: R) {
    tokio::pin!(read);
    let mut buf = BytesMut::with_capacity(64 << 10);
    loop {
        if buf.capacity() - buf.len() < 16 << 10 {
            buf.reserve(64 << 10);
        }
        match read.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
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
            result = st.on_frame(head, &buf[frame::HEADER_LEN..total], &shared.usable);
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
    let mut batch = Vec::with_capacity(64 << 10);
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

#[cfg(test)]
mod tests;
