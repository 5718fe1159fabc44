//! A connection's state, shared by its reader, its writer and its calls under one lock: the
//! streams in flight with their answers and request bodies, the windows both ways, the HPACK
//! tables and why the connection closed; and what a change to it sends.

use super::ended::EndedStreams;
use super::error::H2Error;
use super::limits::{ASSUMED_MAX_STREAMS, CONNECTION_WINDOW, STREAM_WINDOW};
use super::streams::Streams;
use crate::h2client::block::{self, HeaderList, RequestBlocks};
use crate::h2client::frame;
use bytes::{Buf, Bytes};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use tokio::sync::Notify;

/// What a connection's reader, writer and calls share.
pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Wakes the writer when `out` has frames.
    pub(super) flush: Notify,
    /// False once the connection takes no new streams (read without the lock by the pool).
    pub(super) usable: AtomicBool,
    /// Counts the connections of a pool that received a GOAWAY (each once).
    pub(super) goaways: Arc<AtomicU64>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Default)]
pub(super) struct Slot {
    pub(super) head: Option<HeaderList>,
    /// Boxed: most answers have none (gRPC's do), and every slot would hold a header list for them.
    pub(super) trailers: Option<Box<HeaderList>>,
    /// DATA received and not yet taken by the call.
    pub(super) data: Vec<u8>,
    /// The call counts the answer's DATA without reading it: its bytes are given back to the
    /// server as they arrive, never copied ([`super::Connection::count`]).
    pub(super) counted: bool,
    /// The answer's `content-length`, when its DATA must add up to it (RFC 9113 §8.1.1: not for a
    /// HEAD request's answer, a 204 or a 304), and the DATA bytes received so far.
    pub(super) declared_length: Option<u64>,
    pub(super) received: u64,
    /// The request is a HEAD.
    pub(super) head_request: bool,
    /// Request body still to send, then the pieces queued after it (boxed: only a request sent in
    /// pieces has any, and every slot would hold an empty queue inline).
    pub(super) body: Bytes,
    #[allow(clippy::box_collection)] // the point: a pointer in every slot, not an empty queue
    pub(super) queued: Option<Box<VecDeque<Bytes>>>,
    /// The request ends (END_STREAM) once the body queued so far is sent.
    pub(super) request_ends: bool,
    pub(super) send_window: i64,
    /// DATA the server may still send on this stream before our next WINDOW_UPDATE.
    pub(super) recv_window: i64,
    /// Bytes the call consumed that the server has not been given back yet (stream level).
    pub(super) unacked: u32,
    /// The server ended the stream (END_STREAM) or it failed.
    pub(super) ended: bool,
    pub(super) error: Option<H2Error>,
    pub(super) waker: Option<Waker>,
}

impl Slot {
    pub(super) fn finished(&self) -> bool {
        self.ended || self.error.is_some()
    }

    /// Whether body pieces wait behind the one being sent.
    pub(super) fn nothing_queued(&self) -> bool {
        self.queued.as_ref().is_none_or(|q| q.is_empty())
    }

    /// Whether the request has body left to send.
    pub(super) fn body_left(&self) -> bool {
        !self.body.is_empty() || !self.nothing_queued()
    }

    pub(super) fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// Gives stream `id`'s window back once half of it was consumed (an open stream's only):
    /// true when a WINDOW_UPDATE joined `out`.
    pub(super) fn give_back(&mut self, out: &mut Vec<u8>, id: u32) -> bool {
        if self.finished() || self.unacked < STREAM_WINDOW / 2 {
            return false;
        }
        frame::put_window_update(out, id, self.unacked);
        self.recv_window += i64::from(self.unacked);
        self.unacked = 0;
        true
    }
}

/// A header block being received over HEADERS and CONTINUATION frames.
pub(super) struct Partial {
    pub(super) stream: u32,
    pub(super) end_stream: bool,
    pub(super) block: Vec<u8>,
}

/// How this connection's requests use the server's HPACK dynamic table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    /// The first request has not been sent: it adds the fields.
    Unused,
    /// The fields of the request with this id are in the table: it names them by index.
    Filled(u64),
    /// The table cannot hold them: literal fields only.
    Off,
}

pub(super) struct State {
    /// Frames waiting for the writer.
    pub(super) out: Vec<u8>,
    pub(super) table: Table,
    /// Our encoder's table size: the default until the server's SETTINGS lower it.
    pub(super) table_max: u32,
    /// A lowered table size to announce at the start of the next header block (RFC 7541 §4.2).
    pub(super) table_update: Option<u32>,
    pub(super) streams: Streams<Slot>,
    pub(super) next_id: u32,
    /// Streams open in the protocol's sense (counted against the server's limit).
    pub(super) open: usize,
    pub(super) max_open: usize,
    /// Calls waiting for the server's stream limit to allow another stream.
    pub(super) waiting: Vec<Waker>,
    /// Whether the server's first SETTINGS came, and who waits for them ([`super::Connection::settled`]).
    pub(super) settled: bool,
    pub(super) settling: Vec<Waker>,
    pub(super) peer_initial_window: i64,
    pub(super) send_window: i64,
    pub(super) peer_max_frame: usize,
    /// Streams with request body left to send, in order.
    pub(super) sending: VecDeque<u32>,
    /// Bytes consumed (or discarded) that the server has not been given back yet (connection level).
    pub(super) recv_unacked: u32,
    /// DATA the server may still send on the connection before our next WINDOW_UPDATE.
    pub(super) recv_window: i64,
    /// Why no new stream can start (GOAWAY, broken connection, ids exhausted).
    pub(super) closed: Option<H2Error>,
    /// Streams above this id were not processed by a server that sent GOAWAY.
    pub(super) goaway_last: u32,
    pub(super) hpack: crate::h2client::hpack::Decoder,
    pub(super) partial: Option<Partial>,
    /// How the recent streams ended, for frames that come after their call is gone.
    pub(super) ended: EndedStreams,
}

impl State {
    /// A connection's state before any frame arrived; `out` holds what we send first.
    pub(super) fn new(out: Vec<u8>) -> State {
        State {
            out,
            table: Table::Unused,
            table_max: block::DEFAULT_TABLE_SIZE,
            table_update: None,
            streams: Streams::default(),
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
            hpack: crate::h2client::hpack::Decoder::default(),
            partial: None,
            ended: EndedStreams::default(),
        }
    }

    /// The form of the request's header block this request sends (see [`Table`]).
    pub(super) fn choose_block<'b>(&mut self, blocks: &'b RequestBlocks) -> &'b [u8] {
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
    pub(super) fn stream_closed(&mut self) {
        self.open -= 1;
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    /// Gives the connection window back once half of it was consumed.
    pub(super) fn give_back(&mut self) -> bool {
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
    pub(super) fn pump(&mut self) {
        let mut i = 0;
        while i < self.sending.len() {
            let id = self.sending[i];
            let Some(slot) = self.streams.get_mut(&id) else {
                self.sending.remove(i);
                continue;
            };
            if slot.body.is_empty() {
                if let Some(next) = slot.queued.as_mut().and_then(|q| q.pop_front()) {
                    slot.body = next;
                    continue;
                }
                if slot.request_ends {
                    frame::put_data(&mut self.out, id, &[], true); // the request ends after its last piece
                }
                self.sending.remove(i); // sent all: back when more is queued
                continue;
            }
            if self.send_window <= 0 {
                break;
            }
            let left = slot.body.len();
            let n = left.min(self.peer_max_frame).min(self.send_window.min(slot.send_window).max(0) as usize);
            if n == 0 {
                i += 1; // this stream's window is closed; others may go on
                continue;
            }
            let end = n == slot.body.len() && slot.nothing_queued() && slot.request_ends;
            frame::put_data(&mut self.out, id, &slot.body[..n], end);
            slot.body.advance(n);
            slot.send_window -= n as i64;
            self.send_window -= n as i64;
            if end {
                self.sending.remove(i);
            }
        }
    }

    /// No new streams from now on; `e` for the calls still waiting for an answer.
    pub(super) fn close(&mut self, e: H2Error, usable: &AtomicBool) {
        usable.store(false, Ordering::Relaxed);
        if self.closed.is_none() || e == H2Error::Broken {
            self.closed = Some(e);
        }
        for w in self.waiting.drain(..).chain(self.settling.drain(..)) {
            w.wake();
        }
    }

    /// The connection is gone: every call still waiting fails.
    pub(super) fn fail_all(&mut self, usable: &AtomicBool) {
        self.fail_all_with(H2Error::Broken, usable);
    }

    pub(super) fn fail_all_with(&mut self, e: H2Error, usable: &AtomicBool) {
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
    pub(super) fn protocol_error(&mut self, code: u32, usable: &AtomicBool) {
        let last = self.next_id.saturating_sub(2);
        frame::put_goaway(&mut self.out, last, code);
        self.fail_all_with(H2Error::Protocol, usable);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_slot_stays_small() {
        // What every stream in flight holds here (bench/results/h2-stream-memory-2026-12-07.md).
        let size = std::mem::size_of::<super::Slot>();
        assert!(size <= 192, "{size} bytes");
    }
}
