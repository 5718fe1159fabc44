//! The frames a connection receives, applied to its state: answers' heads, data and trailers,
//! settings, window updates, pings, resets and GOAWAY.

use super::{H2Error, Partial, State, MAX_HEADER_LIST, MAX_PENDING_OUT};
use crate::h2client::block::HeaderList;
use crate::h2client::frame::{self, Head};
use bytes::Bytes;
use std::sync::atomic::AtomicBool;

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
            _ => Ok(()),                                       // PRIORITY and unknown types are ignored
        }
    }

    fn on_data(&mut self, head: Head, payload: &[u8]) -> Result<(), u32> {
        if head.stream == 0 {
            return Err(frame::PROTOCOL_ERROR);
        }
        let data = frame::unpadded(&head, payload).ok_or(frame::PROTOCOL_ERROR)?;
        let padding = (payload.len() - data.len()) as u32;
        // Flow control counts the whole payload, padding included (RFC 9113 §6.1): a server
        // sending beyond the windows we advertised would fill our memory.
        self.recv_window -= payload.len() as i64;
        if self.recv_window < 0 {
            return Err(frame::FLOW_CONTROL_ERROR);
        }
        match self.streams.get_mut(&head.stream) {
            Some(slot) if !slot.finished() => {
                slot.recv_window -= payload.len() as i64;
                if slot.recv_window < 0 {
                    return Err(frame::FLOW_CONTROL_ERROR);
                }
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
