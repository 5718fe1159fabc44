//! The HTTP/2 client under a server that sends anything and reads nothing until it has sent it
//! all (so the client's outgoing frames pile up as behind a full socket), with live calls that
//! take their data as it comes and stalled calls that take none until the server is done (so the
//! stream and connection windows fill). What the client wrote is read at the end and checked:
//! what it refused, the windows it granted, what it held.

use crate::h2client::{request_block, Connection};
use crate::h2client::{MAX_FRAME, MAX_HEADER_LIST, MAX_PENDING_OUT, STREAM_WINDOW};
use bytes::Bytes;
use std::cell::Cell;
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a connection fed a server's bytes came to.
#[derive(Debug)]
pub struct H2Run {
    /// The error code of the GOAWAY the client sent, if it sent one.
    pub goaway: Option<u32>,
    /// The answer data each call received: three live calls, then four stalled ones.
    pub received: Vec<u64>,
    /// Everything the client wrote.
    pub written: usize,
}

/// The server's side of the socket, shared by the client's read and write halves.
struct Server {
    data: Bytes,
    step: usize,
    /// Gives other tasks a turn between pieces, as bytes arriving one read at a time do.
    pause: bool,
    /// The server sent everything (or stopped sending): it reads from now on.
    done: bool,
    written: Vec<u8>,
    /// The write the client had in flight while the server did not read.
    in_flight: usize,
    writer: Option<Waker>,
    shut: bool,
    closer: Option<Waker>,
}

#[derive(Clone)]
struct Socket(Arc<Mutex<Server>>);

impl Socket {
    fn server(&self) -> std::sync::MutexGuard<'_, Server> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn finish_sending(&self) {
        let mut s = self.server();
        s.done = true;
        if let Some(w) = s.writer.take() {
            w.wake();
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let mut s = self.server();
        if s.pause && !s.data.is_empty() {
            s.pause = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = s.step.min(s.data.len()).min(buf.remaining());
        buf.put_slice(&s.data.split_to(n));
        s.pause = true;
        if n == 0 {
            drop(s);
            self.finish_sending();
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Socket {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let mut s = self.server();
        if !s.done {
            s.writer = Some(cx.waker().clone());
            s.in_flight = s.in_flight.max(buf.len());
            return Poll::Pending;
        }
        s.written.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut s = self.server();
        s.shut = true;
        if let Some(w) = s.closer.take() {
            w.wake();
        }
        Poll::Ready(Ok(()))
    }
}

/// Feeds `server` to a connection `step` bytes at a time (at least a 65536th of it), while seven
/// gRPC-shaped calls run on it. Every call ends once the bytes end; the client refuses a frame or
/// header block past its cap, takes no data past the windows it granted, and holds at most its
/// cap of outgoing frames for a server that does not read.
pub fn h2_connection(server: Bytes, step: usize) -> H2Run {
    let step = super::pieces::piece_size(step, server.len());
    let socket = Socket(Arc::new(Mutex::new(Server {
        data: server.clone(),
        step,
        pause: false,
        done: false,
        written: Vec::new(),
        in_flight: 0,
        writer: None,
        shut: false,
        closer: None,
    })));
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let received = rt.block_on(calls(&socket));
    let (written, in_flight) = {
        let mut s = socket.server();
        (std::mem::take(&mut s.written), s.in_flight)
    };
    let run = H2Run { goaway: client_goaway(&written), received, written: written.len() };
    check(&server, &written, in_flight, &run);
    run
}

/// Seven calls on a connection over `socket`; what each received once all ended, and once the
/// client closed its side.
async fn calls(socket: &Socket) -> Vec<u64> {
    let connection = Connection::start(socket.clone());
    let headers = [("content-type".to_string(), "application/grpc".to_string()), ("te".into(), "trailers".into())];
    let blocks = request_block("POST", false, "localhost", "/callbench.v1.Auth/Login", &headers);
    let body = Bytes::from_static(b"\0\0\0\0\x05hello");
    let call = |stalled: bool| {
        let (connection, blocks, body) = (&connection, &blocks, &body);
        async move {
            let received = Cell::new(0u64);
            let mut exchange =
                pin!(connection.exchange(blocks, body, |d| received.set(received.get() + d.len() as u64)));
            // A stalled call opens its stream, then reads nothing until the server stops sending.
            let ended = stalled && poll_fn(|cx| Poll::Ready(exchange.as_mut().poll(cx).is_ready())).await;
            while stalled && !ended && !socket.server().done && connection.is_usable() {
                tokio::task::yield_now().await;
            }
            if !ended {
                let _ = exchange.await;
            }
            received.get()
        }
    };
    let (a, b, c, d, e, f, g) =
        tokio::join!(call(false), call(false), call(false), call(true), call(true), call(true), call(true));
    // The server reads now; the client writes what it held and closes once its reader is done.
    socket.finish_sending();
    poll_fn(|cx| {
        let mut s = socket.server();
        if s.shut {
            return Poll::Ready(());
        }
        s.closer = Some(cx.waker().clone());
        Poll::Pending
    })
    .await;
    vec![a, b, c, d, e, f, g]
}

/// Frame types and flags of RFC 9113 §6, for reading both sides' frames here.
const HEADERS: u8 = 0x1;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;
const END_HEADERS: u8 = 0x4;
const PREFACE_LEN: usize = 24;

/// A frame as far as it came: its head (length, type, flags, stream) and the payload's bytes present.
type Frame<'a> = (u32, u8, u8, u32, &'a [u8]);

/// The frames of `bytes`, the last one possibly cut short.
fn frames(mut bytes: &[u8]) -> impl Iterator<Item = Frame<'_>> {
    std::iter::from_fn(move || {
        let head = bytes.get(..9)?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let end = (9 + len as usize).min(bytes.len());
        let frame = (len, head[3], head[4], stream, &bytes[9..end]);
        bytes = &bytes[end..];
        Some(frame)
    })
}

/// The error code of the client's GOAWAY, if it sent one.
fn client_goaway(written: &[u8]) -> Option<u32> {
    let (_, _, _, _, payload) = frames(written.get(PREFACE_LEN..)?).find(|f| f.1 == GOAWAY)?;
    Some(u32::from_be_bytes(payload.get(4..8)?.try_into().ok()?))
}

/// Whether the server's bytes hold a frame, or a header block continued over CONTINUATION
/// frames, past the client's caps before any other error ended the connection.
fn past_a_cap(server: &[u8]) -> bool {
    let mut block: Option<usize> = None;
    for (len, kind, flags, _, payload) in frames(server) {
        if len > MAX_FRAME {
            return true;
        }
        if payload.len() < len as usize {
            return false;
        }
        match (kind, &mut block) {
            (HEADERS, None) if flags & END_HEADERS == 0 => block = Some(0),
            // The first fragment may be padded: only what CONTINUATION adds counts here.
            (CONTINUATION, Some(size)) => {
                *size += len as usize;
                if *size > MAX_HEADER_LIST {
                    return true;
                }
                if flags & END_HEADERS != 0 {
                    block = None;
                }
            }
            (_, Some(_)) | (CONTINUATION, None) => return false, // a protocol error comes first
            _ => {}
        }
    }
    false
}

/// What must hold whatever the server sent.
fn check(server: &[u8], written: &[u8], in_flight: usize, run: &H2Run) {
    if past_a_cap(server) {
        assert!(run.goaway.is_some(), "a frame or header block past its cap was taken");
    }
    // No call took more than its stream's window and what the client gave back on it, nor all
    // of them more than the connection's (RFC 9113 §6.9: 65,535 bytes before any WINDOW_UPDATE).
    let mut granted: HashMap<u32, u64> = HashMap::new();
    for (_, kind, _, stream, payload) in frames(&written[PREFACE_LEN.min(written.len())..]) {
        if let (WINDOW_UPDATE, Ok(word)) = (kind, <[u8; 4]>::try_from(payload)) {
            *granted.entry(stream).or_default() += u64::from(u32::from_be_bytes(word) & 0x7fff_ffff);
        }
    }
    let connection = 65_535 + granted.get(&0).copied().unwrap_or(0);
    let stream = u64::from(STREAM_WINDOW) + granted.iter().filter(|g| *g.0 != 0).map(|g| *g.1).max().unwrap_or(0);
    assert!(
        run.received.iter().sum::<u64>() <= connection,
        "{:?} past the connection's window {connection}",
        run.received
    );
    assert!(run.received.iter().all(|&r| r <= stream), "{:?} past a stream's window {stream}", run.received);
    // A server that does not read leaves the client holding one write in flight and the frames
    // queued behind it, each up to the cap, a frame more and the few frames of its calls
    // (HEADERS, WINDOW_UPDATE, RST_STREAM).
    let queued = written.len().saturating_sub(in_flight);
    let most = MAX_PENDING_OUT + (64 << 10);
    assert!(in_flight <= most && queued <= most, "{in_flight} bytes in flight and {queued} queued for the server");
}
