//! HTTP/3 bounded by construction: h3 holds every frame but DATA whole until its last byte and
//! reads its streams as fast as the server sends, so a frame's length is all a server needs to
//! grow the client without limit (a reserved frame of 2^62 bytes on the control stream, a HEADERS
//! frame that never ends). This wraps h3-quinn's streams and reads each frame's type and length as
//! the bytes go by, before h3 holds them: a frame over its bound ends the stream (a request's) or
//! the connection (the control stream's), and a GOAWAY on the control stream marks the connection
//! draining for the pool. The same numbers as HTTP/2's bounds (`h2client/conn/limits.rs`).

use crate::h2client::{MAX_FRAME, MAX_HEADER_LIST};
use bytes::{Buf, Bytes};
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, StreamId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Everything the server sends on its control stream over a connection's life (SETTINGS, GOAWAY
/// and frames to ignore): as much as HTTP/2's control frames queued for a server that does not read.
pub const MAX_CONTROL_BYTES: u64 = 16 << 20;
/// Bytes on a QPACK, push or unknown unidirectional stream: h3 uses no dynamic table, so a
/// server's encoder stream has nothing to say that needs more.
pub const MAX_OPAQUE_BYTES: u64 = 1 << 20;
/// H3_EXCESSIVE_LOAD (RFC 9114 §8.1): what a stream or connection over a bound is closed with.
const EXCESSIVE_LOAD: u32 = 0x107;

const DATA: u64 = 0x0;
const HEADERS: u64 = 0x1;
const GOAWAY: u64 = 0x7;

/// What a received stream carries, as far as its bounds go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A request stream: the answer's frames.
    Request,
    /// A unidirectional stream whose type (its first varint) is not read yet.
    Unidirectional,
}

#[derive(Debug)]
enum State {
    /// The unidirectional stream's type.
    StreamType(Varint),
    FrameType(Varint),
    FrameLength {
        ty: u64,
        length: Varint,
    },
    Payload {
        left: u64,
    },
    /// A stream read as bytes (QPACK's, push, or of a type unknown): only counted.
    Opaque,
}

/// A QUIC varint read a byte at a time.
#[derive(Debug, Default)]
struct Varint {
    value: u64,
    read: u8,
    len: u8,
}

impl Varint {
    /// Takes one byte; the value once it is whole.
    fn push(&mut self, byte: u8) -> Option<u64> {
        if self.read == 0 {
            self.len = 1 << (byte >> 6);
            self.value = u64::from(byte & 0x3f);
        } else {
            self.value = (self.value << 8) | u64::from(byte);
        }
        self.read += 1;
        (self.read == self.len).then(|| std::mem::take(self).value)
    }
}

/// Why a stream broke a bound, and whether the whole connection goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    pub why: String,
    pub connection: bool,
}

/// Follows one received stream's frames and checks them against their bounds.
#[derive(Debug)]
pub struct FrameGuard {
    state: State,
    control: bool,
    /// Bytes counted against a stream-wide bound (a control or opaque stream's).
    counted: u64,
    /// Set when a GOAWAY frame starts on the control stream.
    draining: Arc<AtomicBool>,
}

impl FrameGuard {
    pub fn new(role: Role, draining: Arc<AtomicBool>) -> Self {
        let state = match role {
            Role::Request => State::FrameType(Varint::default()),
            Role::Unidirectional => State::StreamType(Varint::default()),
        };
        FrameGuard { state, control: false, counted: 0, draining }
    }

    /// Reads `bytes`, the next the stream received.
    pub fn check(&mut self, bytes: &[u8]) -> Result<(), Breach> {
        let mut rest = bytes;
        while let Some((&byte, after)) = rest.split_first() {
            match &mut self.state {
                State::Opaque => break,
                State::Payload { left } => {
                    let n = (*left).min(rest.len() as u64);
                    *left -= n;
                    rest = &rest[n as usize..];
                    if *left == 0 {
                        self.state = State::FrameType(Varint::default());
                    }
                    continue;
                }
                State::StreamType(v) => {
                    if let Some(ty) = v.push(byte) {
                        // The control stream carries frames. Push streams (never allowed: no
                        // MAX_PUSH_ID is sent), QPACK's and unknown types are only counted.
                        self.control = ty == 0x00;
                        self.state = if self.control { State::FrameType(Varint::default()) } else { State::Opaque };
                    }
                }
                State::FrameType(v) => {
                    if let Some(ty) = v.push(byte) {
                        self.state = State::FrameLength { ty, length: Varint::default() };
                    }
                }
                State::FrameLength { ty, length } => {
                    if let Some(length) = length.push(byte) {
                        let ty = *ty;
                        self.frame(ty, length)?;
                        self.state = match length {
                            0 => State::FrameType(Varint::default()),
                            left => State::Payload { left },
                        };
                    }
                }
            }
            rest = after;
        }
        // Stream-wide: all of a control stream, and an opaque stream's bytes after its type.
        let (limit, what) = match (self.control, &self.state) {
            (true, _) => (MAX_CONTROL_BYTES, "control stream"),
            (false, State::Opaque) => (MAX_OPAQUE_BYTES, "QPACK, push or unknown stream"),
            _ => return Ok(()),
        };
        self.counted += if self.control { bytes.len() } else { rest.len() } as u64;
        if self.counted > limit {
            return Err(Breach { why: format!("the server's {what} passed {limit} bytes"), connection: true });
        }
        Ok(())
    }

    /// A frame's head: its type and length, before its payload.
    fn frame(&mut self, ty: u64, length: u64) -> Result<(), Breach> {
        if self.control && ty == GOAWAY {
            self.draining.store(true, Ordering::Relaxed);
        }
        let (limit, what) = match ty {
            DATA if !self.control => return Ok(()), // DATA passes to the call, which holds what it checks
            HEADERS => (MAX_HEADER_LIST as u64, "a header section"),
            _ => (u64::from(MAX_FRAME), "a frame"),
        };
        if length > limit {
            return Err(Breach {
                why: format!("{what} of {length} bytes (type {ty:#x}), over the {limit} allowed"),
                connection: self.control,
            });
        }
        Ok(())
    }
}

/// h3-quinn's connection with every received stream checked by a [`FrameGuard`]; the streams it
/// opens are its opener's.
pub struct Connection {
    inner: h3_quinn::Connection,
    open: OpenStreams,
}

impl Connection {
    pub fn new(quic: quinn::Connection, draining: Arc<AtomicBool>) -> Self {
        let inner = h3_quinn::Connection::new(quic.clone());
        let open = OpenStreams { inner: quic::Connection::<Bytes>::opener(&inner), quic, draining };
        Connection { inner, open }
    }
}

/// Opens request streams whose answers are checked.
pub struct OpenStreams {
    inner: h3_quinn::OpenStreams,
    quic: quinn::Connection,
    draining: Arc<AtomicBool>,
}

impl Clone for OpenStreams {
    fn clone(&self) -> Self {
        OpenStreams { inner: self.inner.clone(), quic: self.quic.clone(), draining: self.draining.clone() }
    }
}

/// A received stream and its guard.
pub struct RecvStream<S> {
    inner: S,
    guard: FrameGuard,
    quic: quinn::Connection,
    /// The bound broken, kept for every later poll.
    broken: Option<Breach>,
}

impl<S> RecvStream<S> {
    fn new(inner: S, role: Role, quic: quinn::Connection, draining: Arc<AtomicBool>) -> Self {
        RecvStream { inner, guard: FrameGuard::new(role, draining), quic, broken: None }
    }
}

fn breach_error(breach: &Breach) -> StreamErrorIncoming {
    StreamErrorIncoming::Unknown(breach.why.clone().into())
}

impl<S: quic::RecvStream<Buf = Bytes>> quic::RecvStream for RecvStream<S> {
    type Buf = Bytes;

    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        if let Some(breach) = &self.broken {
            return Poll::Ready(Err(breach_error(breach)));
        }
        let data = std::task::ready!(self.inner.poll_data(cx))?;
        let Some(data) = data else { return Poll::Ready(Ok(None)) };
        if let Err(breach) = self.guard.check(data.chunk()) {
            if breach.connection {
                self.quic.close(EXCESSIVE_LOAD.into(), breach.why.as_bytes());
            } else {
                self.inner.stop_sending(u64::from(EXCESSIVE_LOAD));
            }
            let error = breach_error(&breach);
            self.broken = Some(breach);
            return Poll::Ready(Err(error));
        }
        Poll::Ready(Ok(Some(data)))
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.inner.stop_sending(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.inner.recv_id()
    }
}

/// A request stream: h3-quinn's send half and a checked receive half.
pub struct BidiStream {
    send: h3_quinn::SendStream<Bytes>,
    recv: RecvStream<h3_quinn::RecvStream>,
}

impl BidiStream {
    fn new(inner: h3_quinn::BidiStream<Bytes>, quic: quinn::Connection, draining: Arc<AtomicBool>) -> Self {
        let (send, recv) = quic::BidiStream::split(inner);
        BidiStream { send, recv: RecvStream::new(recv, Role::Request, quic, draining) }
    }
}

impl quic::BidiStream<Bytes> for BidiStream {
    type SendStream = h3_quinn::SendStream<Bytes>;
    type RecvStream = RecvStream<h3_quinn::RecvStream>;

    fn split(self) -> (Self::SendStream, Self::RecvStream) {
        (self.send, self.recv)
    }
}

impl quic::RecvStream for BidiStream {
    type Buf = Bytes;

    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        self.recv.poll_data(cx)
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.recv.stop_sending(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.recv.recv_id()
    }
}

impl quic::SendStream<Bytes> for BidiStream {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_ready(cx)
    }

    fn send_data<T: Into<quic::WriteBuf<Bytes>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        self.send.send_data(data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_finish(cx)
    }

    fn reset(&mut self, reset_code: u64) {
        self.send.reset(reset_code)
    }

    fn send_id(&self) -> StreamId {
        self.send.send_id()
    }
}

impl quic::OpenStreams<Bytes> for OpenStreams {
    type BidiStream = BidiStream;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<BidiStream, StreamErrorIncoming>> {
        let inner = std::task::ready!(self.inner.poll_open_bidi(cx))?;
        Poll::Ready(Ok(BidiStream::new(inner, self.quic.clone(), self.draining.clone())))
    }

    fn poll_open_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        self.inner.poll_open_send(cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        quic::OpenStreams::<Bytes>::close(&mut self.inner, code, reason)
    }
}

impl quic::OpenStreams<Bytes> for Connection {
    type BidiStream = BidiStream;
    type SendStream = h3_quinn::SendStream<Bytes>;

    fn poll_open_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<BidiStream, StreamErrorIncoming>> {
        self.open.poll_open_bidi(cx)
    }

    fn poll_open_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        self.open.poll_open_send(cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        self.open.close(code, reason)
    }
}

impl quic::Connection<Bytes> for Connection {
    type RecvStream = RecvStream<h3_quinn::RecvStream>;
    type OpenStreams = OpenStreams;

    fn poll_accept_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::RecvStream, ConnectionErrorIncoming>> {
        let inner = std::task::ready!(quic::Connection::<Bytes>::poll_accept_recv(&mut self.inner, cx))?;
        let (quic, draining) = (self.open.quic.clone(), self.open.draining.clone());
        Poll::Ready(Ok(RecvStream::new(inner, Role::Unidirectional, quic, draining)))
    }

    fn poll_accept_bidi(&mut self, cx: &mut Context<'_>) -> Poll<Result<BidiStream, ConnectionErrorIncoming>> {
        // A server may not open request streams (RFC 9114 §6.1); quinn grants it none (h3pool's transport).
        let inner = std::task::ready!(quic::Connection::<Bytes>::poll_accept_bidi(&mut self.inner, cx))?;
        Poll::Ready(Ok(BidiStream::new(inner, self.open.quic.clone(), self.open.draining.clone())))
    }

    fn opener(&self) -> OpenStreams {
        self.open.clone()
    }
}

#[cfg(test)]
mod tests;
