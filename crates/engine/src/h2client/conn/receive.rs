//! The frames a connection receives, applied to its state: answers' heads, data and trailers,
//! settings, window updates, pings, resets and GOAWAY. Each frame is judged by the rules of RFC
//! 9113 for the state its stream is in (§5.1): a connection error is `Err(code)`, a stream error
//! resets that stream only.

use super::ended::Ended;
use super::error::H2Error;
use super::state::{Partial, State};
use super::{MAX_HEADER_LIST, MAX_PENDING_OUT};
use crate::h2client::block::{HeaderList, FIELD_OVERHEAD};
use crate::h2client::fields::FieldCheck;
use crate::h2client::frame::{self, Head};
use bytes::Bytes;
use std::sync::atomic::AtomicBool;

/// A stream's state as a frame from the server finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// Never opened: an even id (servers cannot open streams, we refuse push) or one we have not
    /// used yet.
    Idle,
    /// Waiting for (more of) its answer.
    Open,
    /// Closed, as [`Ended`] says.
    Closed(Ended),
}

impl State {
    /// Handles one frame; Err(code) is a connection error.
    pub(super) fn on_frame(&mut self, head: Head, payload: &[u8], usable: &AtomicBool) -> Result<(), u32> {
        if let Some(p) = &self.partial {
            if head.kind != frame::CONTINUATION || head.stream != p.stream {
                return Err(frame::PROTOCOL_ERROR);
            }
        }
        match head.kind {
            frame::DATA => self.on_data(head, payload),
            frame::HEADERS => {
                if self.stream(head.stream) == Stream::Idle {
                    return Err(frame::PROTOCOL_ERROR); // stream 0, or a stream we never opened
                }
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
            frame::PRIORITY => match (head.stream, payload.len(), self.stream(head.stream)) {
                (0, _, _) => Err(frame::PROTOCOL_ERROR),
                (_, 5, _) => Ok(()), // priorities are not used: a client has nothing to schedule
                (_, _, Stream::Idle) => Err(frame::FRAME_SIZE_ERROR), // no RST_STREAM on an idle stream
                (id, _, _) => self.stream_error(id, frame::FRAME_SIZE_ERROR),
            },
            frame::RST_STREAM => {
                if payload.len() != 4 {
                    return Err(frame::FRAME_SIZE_ERROR);
                }
                let code = frame::word(payload).ok_or(frame::FRAME_SIZE_ERROR)?;
                match self.stream(head.stream) {
                    Stream::Idle => Err(frame::PROTOCOL_ERROR), // stream 0 included
                    Stream::Open => {
                        let slot = self.streams.get_mut(&head.stream).expect("open streams have a slot");
                        slot.error = Some(H2Error::Reset(code));
                        slot.wake();
                        self.sending.retain(|&s| s != head.stream);
                        self.stream_closed();
                        self.ended.record(head.stream, Ended::ResetByServer);
                        Ok(())
                    }
                    Stream::Closed(_) => Ok(()),
                }
            }
            frame::SETTINGS => self.on_settings(head, payload),
            frame::PING => {
                if payload.len() != 8 {
                    return Err(frame::FRAME_SIZE_ERROR);
                }
                if head.stream != 0 {
                    return Err(frame::PROTOCOL_ERROR);
                }
                if !head.has(frame::ACK) {
                    if self.out.len() > MAX_PENDING_OUT {
                        return Err(frame::ENHANCE_YOUR_CALM);
                    }
                    frame::put_ping_ack(&mut self.out, payload);
                }
                Ok(())
            }
            frame::GOAWAY => self.on_goaway(head, payload, usable),
            frame::WINDOW_UPDATE => {
                if payload.len() != 4 {
                    return Err(frame::FRAME_SIZE_ERROR);
                }
                let inc = i64::from(frame::word(payload).ok_or(frame::FRAME_SIZE_ERROR)? & frame::MAX_WINDOW);
                if inc == 0 {
                    return Err(frame::PROTOCOL_ERROR); // RFC 9113 §6.9
                }
                if head.stream == 0 {
                    self.send_window += inc;
                    if self.send_window > i64::from(frame::MAX_WINDOW) {
                        return Err(frame::FLOW_CONTROL_ERROR);
                    }
                } else if self.stream(head.stream) == Stream::Idle {
                    return Err(frame::PROTOCOL_ERROR);
                } else if let Some(slot) = self.streams.get_mut(&head.stream) {
                    slot.send_window += inc;
                    if slot.send_window > i64::from(frame::MAX_WINDOW) {
                        return Err(frame::FLOW_CONTROL_ERROR); // RFC 9113 §6.9.1
                    }
                }
                self.pump();
                Ok(())
            }
            frame::PUSH_PROMISE => Err(frame::PROTOCOL_ERROR), // we disabled push
            _ => Ok(()),                                       // unknown types are ignored
        }
    }

    /// Where stream `id` stands for a frame the server sent on it.
    fn stream(&self, id: u32) -> Stream {
        if id.is_multiple_of(2) || id >= self.next_id {
            return Stream::Idle;
        }
        match self.streams.get(&id) {
            Some(slot) if !slot.finished() => Stream::Open,
            Some(slot) if slot.ended => Stream::Closed(Ended::ByServer),
            Some(slot) if matches!(slot.error, Some(H2Error::Reset(_))) => Stream::Closed(Ended::ResetByServer),
            Some(_) => Stream::Closed(Ended::Unknown), // reset by us, or refused by a GOAWAY
            None => Stream::Closed(self.ended.get(id, self.next_id)),
        }
    }

    /// A frame on a stream already closed: after the server's END_STREAM a connection error
    /// STREAM_CLOSED, after its RST_STREAM a stream error, after ours nothing (§5.1).
    fn on_closed(&mut self, id: u32, how: Ended) -> Result<(), u32> {
        match how {
            Ended::ByServer => Err(frame::STREAM_CLOSED),
            Ended::ResetByServer => self.stream_error(id, frame::STREAM_CLOSED),
            Ended::Unknown => Ok(()),
        }
    }

    /// Resets stream `id` with `code`; its call, if still waiting, fails as the server's protocol
    /// error on this stream only.
    fn stream_error(&mut self, id: u32, code: u32) -> Result<(), u32> {
        if self.out.len() > MAX_PENDING_OUT {
            return Err(frame::ENHANCE_YOUR_CALM); // resets the server provokes and never reads
        }
        frame::put_rst_stream(&mut self.out, id, code);
        if let Some(slot) = self.streams.get_mut(&id) {
            if !slot.finished() {
                slot.error = Some(H2Error::Malformed);
                slot.wake();
                self.sending.retain(|&s| s != id);
                self.stream_closed();
            }
        }
        self.ended.record(id, Ended::Unknown);
        Ok(())
    }

    fn on_settings(&mut self, head: Head, payload: &[u8]) -> Result<(), u32> {
        if head.stream != 0 {
            return Err(frame::PROTOCOL_ERROR); // RFC 9113 §6.5: connection-level only
        }
        if head.has(frame::ACK) {
            return if payload.is_empty() { Ok(()) } else { Err(frame::FRAME_SIZE_ERROR) };
        }
        if self.out.len() > MAX_PENDING_OUT {
            return Err(frame::ENHANCE_YOUR_CALM); // acknowledgements the server never reads
        }
        for (id, value) in frame::settings(payload).ok_or(frame::FRAME_SIZE_ERROR)? {
            match id {
                // A server must not enable push (§6.5.2), nor send any other value than 0.
                frame::SETTINGS_ENABLE_PUSH if value != 0 => return Err(frame::PROTOCOL_ERROR),
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
                        if slot.send_window > i64::from(frame::MAX_WINDOW) {
                            return Err(frame::FLOW_CONTROL_ERROR); // §6.9.2
                        }
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
        self.settled = true;
        for w in self.settling.drain(..) {
            w.wake();
        }
        self.pump();
        Ok(())
    }

    /// GOAWAY: streams above its last id were not processed; what we queued for them and did not
    /// write yet is taken back, as the server would ignore it.
    fn on_goaway(&mut self, head: Head, payload: &[u8], usable: &AtomicBool) -> Result<(), u32> {
        if head.stream != 0 {
            return Err(frame::PROTOCOL_ERROR);
        }
        if payload.len() < 8 {
            return Err(frame::FRAME_SIZE_ERROR);
        }
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
        let last = self.goaway_last;
        self.sending.retain(|&s| s <= last);
        frame::retain_frames(&mut self.out, |h| h.stream <= last);
        Ok(())
    }

    fn on_data(&mut self, head: Head, payload: &[u8]) -> Result<(), u32> {
        let stream = self.stream(head.stream);
        if stream == Stream::Idle {
            return Err(frame::PROTOCOL_ERROR); // stream 0, or a stream we never opened
        }
        let data = frame::unpadded(&head, payload).ok_or(frame::PROTOCOL_ERROR)?;
        let padding = (payload.len() - data.len()) as u32;
        // Flow control counts the whole payload, padding included (RFC 9113 §6.1): a server
        // sending beyond the windows we advertised would fill our memory.
        self.recv_window -= payload.len() as i64;
        if self.recv_window < 0 {
            return Err(frame::FLOW_CONTROL_ERROR);
        }
        let Stream::Closed(how) = stream else {
            let slot = self.streams.get_mut(&head.stream).expect("open streams have a slot");
            slot.recv_window -= payload.len() as i64;
            if slot.recv_window < 0 {
                return Err(frame::FLOW_CONTROL_ERROR);
            }
            if slot.head.is_none() {
                return Err(frame::PROTOCOL_ERROR); // data before the answer's head
            }
            // Padding is consumed on arrival, and so is a counted call's data.
            let consumed = if slot.counted { payload.len() as u32 } else { padding };
            self.recv_unacked += consumed;
            slot.unacked += consumed;
            if !slot.counted {
                slot.data.extend_from_slice(data);
            }
            slot.received += data.len() as u64;
            // More DATA than its content-length, or less by the end: malformed (RFC 9113 §8.1.1).
            let ends = head.has(frame::END_STREAM);
            let short = |declared: u64| if ends { slot.received != declared } else { slot.received > declared };
            if slot.declared_length.is_some_and(short) {
                self.give_back();
                return self.stream_error(head.stream, frame::PROTOCOL_ERROR);
            }
            if ends {
                self.end_stream(head.stream);
            } else if slot.counted {
                slot.give_back(&mut self.out, head.stream); // nothing to wake the call for
            } else {
                slot.wake();
            }
            self.give_back();
            return Ok(());
        };
        // A closed stream's bytes still count against the connection.
        self.recv_unacked += payload.len() as u32;
        self.give_back();
        self.on_closed(head.stream, how)
    }

    /// A complete header block: decoded (always, to keep the decoder's table in step) and given
    /// to its stream as the answer's head, an informational head (dropped) or its trailers.
    fn on_block(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Result<(), u32> {
        let state = self.stream(stream);
        let trailers = self.streams.get(&stream).is_some_and(|slot| slot.head.is_some());
        let mut list = HeaderList::default();
        let mut check = FieldCheck::new(trailers);
        let mut too_big = false;
        self.hpack
            .decode(block, |name, value| {
                if list.size() + name.len() + value.len() + FIELD_OVERHEAD > MAX_HEADER_LIST {
                    too_big = true;
                } else if !too_big {
                    check.field(name, value);
                    list.push(name, value);
                }
            })
            .map_err(|_| frame::COMPRESSION_ERROR)?;
        if too_big {
            return Err(frame::PROTOCOL_ERROR);
        }
        if let Stream::Closed(how) = state {
            return self.on_closed(stream, how);
        }
        if check.malformed() {
            return self.stream_error(stream, frame::PROTOCOL_ERROR);
        }
        let slot = self.streams.get_mut(&stream).expect("open streams have a slot");
        if trailers {
            if !end_stream {
                return Err(frame::PROTOCOL_ERROR); // a second head without END_STREAM
            }
            if slot.declared_length.is_some_and(|declared| slot.received != declared) {
                return self.stream_error(stream, frame::PROTOCOL_ERROR); // DATA short of its content-length
            }
            slot.trailers = Some(Box::new(list));
        } else {
            match list.status() {
                // Informational: the real head follows. One that ends the stream, or 101
                // (HTTP/2 has no protocol switch, §8.6), is malformed.
                Some(101) => return self.stream_error(stream, frame::PROTOCOL_ERROR),
                Some(100..=199) if end_stream => return self.stream_error(stream, frame::PROTOCOL_ERROR),
                Some(100..=199) => return Ok(()),
                status => {
                    let bodiless = slot.head_request || matches!(status, Some(204 | 304));
                    let declared = match list.get("content-length") {
                        None => None,
                        Some(value) => match std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<u64>().ok())
                        {
                            Some(n) => Some(n),
                            None => return self.stream_error(stream, frame::PROTOCOL_ERROR),
                        },
                    };
                    slot.declared_length = declared.filter(|_| !bodiless);
                    if end_stream && slot.declared_length.is_some_and(|n| n > 0) {
                        return self.stream_error(stream, frame::PROTOCOL_ERROR);
                        // no DATA for its content-length
                    }
                    slot.head = Some(list);
                }
            }
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
        self.ended.record(id, Ended::ByServer);
        if slot.body_left() || !slot.request_ends {
            // Answered before reading all of the request: stop sending it (RFC 9113 §8.1).
            slot.body = Bytes::new();
            slot.queued = None;
            slot.request_ends = true;
            self.sending.retain(|&s| s != id);
            frame::put_rst_stream(&mut self.out, id, frame::CANCEL);
        }
        self.stream_closed();
    }
}
