//! HTTP/2 and gRPC with nothing on top, over epoll: the frames callbench's exchange sends,
//! prepared once — its preface, SETTINGS and connection WINDOW_UPDATE, then per call the HEADERS
//! block callbench's encoder makes (the first on a connection adding its fields to the server's
//! table, the others naming them by index) and, for gRPC, one DATA frame with the message — each
//! written with its stream id patched in. The answer is read only as far as its frames' 9-byte
//! heads: a frame that ends a stream ends its call, and a new one starts on the next id. No HPACK
//! decoding, no checks. SETTINGS and PINGs are acknowledged, and DATA given back to the
//! connection's window once half of it was used, as callbench does; streams' own windows (4 MiB)
//! are never used up by these answers.

use crate::outcome::{Outcome, Plan, Window};
use callbench_engine::h2pool::RequestBlocks;
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
/// callbench's windows and frame limits (crates/engine/src/h2client/conn/limits.rs).
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;
const MAX_FRAME: u32 = 1 << 20;
const MAX_HEADER_LIST: u32 = 1 << 20;
const DEFAULT_WINDOW: u32 = 65_535;
const DEFAULT_MAX_FRAME: usize = 16_384;

/// One call's frames, prepared once: HEADERS (and a DATA frame of `body`, when there is one).
pub struct Call {
    first: Vec<u8>,
    repeat: Vec<u8>,
    /// Where the DATA frame starts in each form, when the call has a body.
    data_at: Option<(usize, usize)>,
}

impl Call {
    pub fn new(blocks: &RequestBlocks, body: &[u8]) -> Result<Call, String> {
        if blocks.first.len() > DEFAULT_MAX_FRAME || body.len() > DEFAULT_MAX_FRAME {
            return Err("the request does not fit one frame of the default size".into());
        }
        let form = |block: &[u8]| {
            let mut f = vec![];
            let flags = if body.is_empty() { END_HEADERS | END_STREAM } else { END_HEADERS };
            put_head(&mut f, block.len(), HEADERS, flags, 0);
            f.extend_from_slice(block);
            let at = f.len();
            if !body.is_empty() {
                put_head(&mut f, body.len(), DATA, END_STREAM, 0);
                f.extend_from_slice(body);
            }
            (f, at)
        };
        let ((first, first_at), (repeat, repeat_at)) = (form(&blocks.first), form(&blocks.repeat));
        Ok(Call { first, repeat, data_at: (!body.is_empty()).then_some((first_at, repeat_at)) })
    }

    /// Appends the call on stream `id` to `out`.
    fn put(&self, out: &mut Vec<u8>, id: u32, first: bool) {
        let (frames, data_at) =
            if first { (&self.first, self.data_at.map(|d| d.0)) } else { (&self.repeat, self.data_at.map(|d| d.1)) };
        let start = out.len();
        out.extend_from_slice(frames);
        out[start + 5..start + 9].copy_from_slice(&id.to_be_bytes());
        if let Some(at) = data_at {
            out[start + at + 5..start + at + 9].copy_from_slice(&id.to_be_bytes());
        }
    }
}

fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// What callbench writes first on a connection: the preface, its SETTINGS, its connection window.
fn opening() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    let settings: [(u16, u32); 4] = [(0x2, 0), (0x4, STREAM_WINDOW), (0x5, MAX_FRAME), (0x6, MAX_HEADER_LIST)];
    put_head(&mut out, settings.len() * 6, SETTINGS, 0, 0);
    for (id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
    put_window_update(&mut out, CONNECTION_WINDOW - DEFAULT_WINDOW);
    out
}

fn put_window_update(out: &mut Vec<u8>, n: u32) {
    put_head(out, 4, WINDOW_UPDATE, 0, 0);
    out.extend_from_slice(&n.to_be_bytes());
}

struct Conn<'a> {
    socket: &'a TcpStream,
    /// Received bytes not yet parsed into whole frames.
    buf: Vec<u8>,
    next_id: u32,
    /// When each stream in flight was sent.
    sent: HashMap<u32, Instant>,
    /// DATA bytes not yet given back to the connection's window.
    unacked: u32,
    out: Vec<u8>,
}

impl Conn<'_> {
    fn start(&mut self, call: &Call, now: Instant) {
        let id = self.next_id;
        call.put(&mut self.out, id, id == 1);
        self.sent.insert(id, now);
        self.next_id += 2;
    }

    /// Handles the whole frames in `buf`; false once the window says the run is over.
    fn on_frames(&mut self, call: &Call, window: &mut Window, now: Instant) -> Result<bool, String> {
        let mut at = 0;
        let mut running = true;
        while self.buf.len() - at >= 9 {
            let h = &self.buf[at..at + 9];
            let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
            let (kind, flags) = (h[3], h[4]);
            let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            if self.buf.len() - at < 9 + len {
                break;
            }
            let payload = at + 9..at + 9 + len;
            match kind {
                DATA => self.unacked += len as u32,
                SETTINGS if flags & ACK == 0 => put_head(&mut self.out, 0, SETTINGS, ACK, 0),
                PING if flags & ACK == 0 => {
                    put_head(&mut self.out, 8, PING, ACK, 0);
                    self.out.extend_from_slice(&self.buf[payload.clone()]);
                }
                // A reset after the answer ended (NO_ERROR, some servers' way to close) is no failure.
                RST_STREAM if self.sent.contains_key(&stream) => {
                    return Err(format!("the server reset stream {stream}"))
                }
                GOAWAY => return Err("the server sent GOAWAY".into()),
                _ => {}
            }
            if (kind == DATA || kind == HEADERS) && flags & END_STREAM != 0 {
                let sent =
                    self.sent.remove(&stream).ok_or_else(|| format!("an answer on stream {stream}, never opened"))?;
                running &= window.answered(sent, now);
                self.start(call, now);
            }
            at = payload.end;
        }
        self.buf.drain(..at);
        if self.unacked >= CONNECTION_WINDOW / 2 {
            put_window_update(&mut self.out, self.unacked);
            self.unacked = 0;
        }
        Ok(running)
    }
}

/// `streams` calls in flight on each connection until the window ends.
pub fn run(sockets: &[TcpStream], streams: usize, call: &Call, plan: &Plan) -> Result<Outcome, String> {
    // SAFETY: epoll_create1 has no preconditions.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        return Err(format!("epoll_create1: {}", std::io::Error::last_os_error()));
    }
    let result = drive(epfd, sockets, streams, call, plan);
    // SAFETY: closing the descriptor this function made.
    unsafe { libc::close(epfd) };
    result
}

fn drive(epfd: i32, sockets: &[TcpStream], streams: usize, call: &Call, plan: &Plan) -> Result<Outcome, String> {
    let mut window = Window::new(plan);
    let now = Instant::now();
    let mut conns: Vec<Conn> = sockets
        .iter()
        .map(|socket| Conn {
            socket,
            buf: Vec::with_capacity(64 << 10),
            next_id: 1,
            sent: HashMap::with_capacity(streams * 2),
            unacked: 0,
            out: opening(),
        })
        .collect();
    for (i, c) in conns.iter_mut().enumerate() {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        // SAFETY: valid descriptors and event.
        if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, c.socket.as_raw_fd(), &mut ev) } < 0 {
            return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
        }
        for _ in 0..streams {
            c.start(call, now);
        }
        flush(c)?;
    }
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; conns.len().min(1024)];
    let mut chunk = vec![0u8; 64 << 10];
    let mut running = true;
    while running {
        let n = crate::socket::wait(epfd, &mut events)?;
        let now = Instant::now();
        for ev in &events[..n] {
            let c = &mut conns[ev.u64 as usize];
            let mut socket = c.socket;
            match socket.read(&mut chunk) {
                Ok(0) => return Err("the server closed a connection".into()),
                Ok(k) => c.buf.extend_from_slice(&chunk[..k]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => continue,
                Err(e) => return Err(format!("receive: {e}")),
            }
            running &= c.on_frames(call, &mut window, now)?;
            flush(c)?;
        }
        running &= !window.over(now);
    }
    Ok(window.finish())
}

/// Writes what the connection queued, in one write.
fn flush(c: &mut Conn) -> Result<(), String> {
    if !c.out.is_empty() {
        let mut socket = c.socket;
        socket.write_all(&c.out).map_err(|e| format!("send: {e}"))?;
        c.out.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_engine::h2pool::request_block;

    #[test]
    fn a_call_is_patched_with_its_stream_id_in_every_frame() {
        let blocks = request_block("POST", false, "127.0.0.1:1", "/a.B/C", &[]);
        let call = Call::new(&blocks, &[0, 0, 0, 0, 0]).unwrap();
        let mut out = vec![];
        call.put(&mut out, 7, false);
        let id = |at: usize| u32::from_be_bytes(out[at + 5..at + 9].try_into().unwrap());
        let data_at = 9 + blocks.repeat.len();
        assert_eq!((out[3], out[4], id(0)), (HEADERS, END_HEADERS, 7));
        assert_eq!((out[data_at + 3], out[data_at + 4], id(data_at)), (DATA, END_STREAM, 7));
        assert_eq!(out.len(), data_at + 9 + 5);
        let get_blocks = request_block("GET", false, "127.0.0.1:1", "/s", &[]);
        let mut out = vec![];
        Call::new(&get_blocks, &[]).unwrap().put(&mut out, 1, true);
        assert_eq!((out[4], &out[9..]), (END_HEADERS | END_STREAM, &get_blocks.first[..]));
    }
}
