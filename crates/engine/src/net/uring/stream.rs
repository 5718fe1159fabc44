//! A connected socket read and written through a [`Ring`]: its receive (multishot into the
//! ring's provided buffers, or single-shot into its own) and its send.

use super::buffers;
use super::ring::{MultishotOp, Op, OpState, Received, Ring, SingleOp, RECV_SIZE, SEND_MAX};
use super::wake::SocketWatch;
use io_uring::{opcode, types};
use std::collections::VecDeque;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// A send in flight: the bytes of `buf[from..len]` are still to go.
#[derive(Clone, Copy)]
struct Sending {
    op: usize,
    from: usize,
    len: usize,
}

/// The receive a stream has on the ring, if any.
#[derive(Clone, Copy)]
enum Receiving {
    Idle,
    SingleShot(usize),
    Multishot(usize),
}

/// A connected TCP socket read and written through a [`Ring`].
pub struct UringStream {
    ring: Arc<Ring>,
    /// Under DEFER_TASKRUN, what tells this stream's task of news for its operations (see
    /// [`super::wake`]); dropped before the socket closes.
    watch: Option<SocketWatch>,
    /// Taken by the drop, which hands it to the ring.
    socket: Option<TcpStream>,
    recv: Receiving,
    /// The last multishot receive ran out of buffers: the next read receives single-shot into
    /// `rx` (re-arming at once could meet ENOBUFS again while other streams hold the buffers).
    single_shot_next: bool,
    /// Received bytes not read yet: `rx[rx_start..rx_end]`.
    rx: Vec<u8>,
    rx_start: usize,
    rx_end: usize,
    eof: bool,
    send: Option<Sending>,
    /// The send buffer while no send is in flight (kept to reuse its allocation).
    tx: Vec<u8>,
}

impl UringStream {
    pub(super) fn new(ring: Arc<Ring>, socket: TcpStream) -> io::Result<UringStream> {
        let watch = if ring.deferred() { Some(SocketWatch::new(&socket)?) } else { None };
        ring.adopt(&socket);
        Ok(UringStream {
            ring,
            watch,
            socket: Some(socket),
            recv: Receiving::Idle,
            single_shot_next: false,
            rx: Vec::new(),
            rx_start: 0,
            rx_end: 0,
            eof: false,
            send: None,
            tx: Vec::new(),
        })
    }

    /// Whether the stream's receive in flight is multishot (for tests).
    #[cfg(test)]
    pub(super) fn receiving_multishot(&self) -> bool {
        matches!(self.recv, Receiving::Multishot(_))
    }

    /// The socket's descriptor (for tests that ask the kernel about it).
    #[cfg(test)]
    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.socket().as_raw_fd()
    }

    fn socket(&self) -> &TcpStream {
        self.socket.as_ref().expect("the socket is taken only by the drop")
    }

    /// Under DEFER_TASKRUN: whether the socket had news of `interest` since last asked, and the
    /// ring was entered so that the kernel posted the completions it held (then the caller polls
    /// its operation again); else the task is woken by the next news.
    fn socket_news(&self, cx: &mut Context<'_>, interest: Interest) -> bool {
        self.watch.as_ref().is_some_and(|watch| watch.news(cx, interest)) && self.ring.post_deferred()
    }

    fn fd(&self) -> types::Fd {
        types::Fd(self.socket().as_raw_fd())
    }

    /// Queues the receive the next bytes come through: multishot where the ring has it.
    fn queue_recv(&mut self) -> io::Result<()> {
        match self.ring.multishot_flags() {
            Some(flags) if !self.single_shot_next => self.arm_multishot(flags),
            _ => self.queue_single_recv(),
        }
    }

    fn queue_single_recv(&mut self) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.rx);
        buf.resize(RECV_SIZE, 0);
        let entry = opcode::Recv::new(self.fd(), buf.as_mut_ptr(), buf.len() as u32).build();
        let op = Op::Single(SingleOp { state: OpState::Waiting(None), buf });
        self.recv = Receiving::SingleShot(self.ring.push(entry, op)?);
        Ok(())
    }

    fn arm_multishot(&mut self, flags: i32) -> io::Result<()> {
        let entry = opcode::RecvMulti::new(self.fd(), buffers::GROUP).flags(flags).build();
        let op = Op::Multishot(MultishotOp { completions: VecDeque::new(), waker: None, orphaned: false });
        self.recv = Receiving::Multishot(self.ring.push(entry, op)?);
        Ok(())
    }

    /// Copies what `out` takes of `bytes` into it, and keeps the rest in `rx` for the next read.
    fn deliver(rx: &mut Vec<u8>, rx_range: &mut (usize, usize), bytes: &[u8], out: &mut ReadBuf<'_>) {
        let n = bytes.len().min(out.remaining());
        out.put_slice(&bytes[..n]);
        rx.clear();
        rx.extend_from_slice(&bytes[n..]);
        *rx_range = (0, rx.len());
    }

    /// A single-shot receive's completion: data into `rx`, the end, or an error.
    fn poll_single_recv(&mut self, op: usize, cx: &Context<'_>) -> Poll<io::Result<()>> {
        let (result, buf) = std::task::ready!(self.ring.poll_op(op, cx));
        self.recv = Receiving::Idle;
        self.rx = buf;
        match result {
            0 => self.eof = true,
            n if n > 0 => {
                (self.rx_start, self.rx_end) = (0, n as usize);
                self.single_shot_next = false;
            }
            e if e == -libc::EINTR || e == -libc::EAGAIN => {}
            e => return Poll::Ready(Err(io::Error::from_raw_os_error(-e))),
        }
        Poll::Ready(Ok(()))
    }

    /// A multishot receive's oldest completion: its bytes go into `out` (the rest into `rx`), or
    /// the end, or an error; when it was the last, the next read arms another receive.
    fn poll_multishot(&mut self, op: usize, cx: &Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let UringStream { ring, rx, rx_start, rx_end, .. } = self;
        let mut rx_range = (*rx_start, *rx_end);
        let Received { result, last } =
            std::task::ready!(ring.poll_multishot(op, cx, |bytes| Self::deliver(rx, &mut rx_range, bytes, out)));
        (self.rx_start, self.rx_end) = rx_range;
        if last {
            self.recv = Receiving::Idle;
        }
        match result {
            n if n > 0 => {}
            0 => self.eof = true,
            e if e == -libc::ENOBUFS => self.single_shot_next = true,
            e if e == -libc::EINTR || e == -libc::EAGAIN => {}
            // Refused by this kernel (a receive flag it does not know): single-shot from now on.
            e if last && (e == -libc::EINVAL || e == -libc::EOPNOTSUPP) => self.ring.refuse_multishot(),
            e => return Poll::Ready(Err(io::Error::from_raw_os_error(-e))),
        }
        Poll::Ready(Ok(()))
    }

    fn queue_send(&mut self, buf: Vec<u8>, from: usize) -> io::Result<()> {
        let len = buf.len();
        let entry =
            opcode::Send::new(self.fd(), buf[from..].as_ptr(), (len - from) as u32).flags(libc::MSG_NOSIGNAL).build();
        let op = self.ring.push(entry, Op::Single(SingleOp { state: OpState::Waiting(None), buf }))?;
        self.send = Some(Sending { op, from, len });
        Ok(())
    }

    /// Ready when no send is in flight any more (the last one wholly sent, or its error).
    fn poll_sent(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(Sending { op, from, len }) = self.send {
            let (result, buf) = match self.ring.poll_op(op, cx) {
                Poll::Pending if self.socket_news(cx, Interest::WRITABLE) => continue,
                Poll::Pending => return Poll::Pending,
                Poll::Ready(done) => done,
            };
            self.send = None;
            match result {
                n if n >= 0 && from + (n as usize) < len => self.queue_send(buf, from + n as usize)?,
                n if n >= 0 => self.tx = buf,
                e if e == -libc::EINTR || e == -libc::EAGAIN => self.queue_send(buf, from)?,
                e => {
                    self.tx = buf;
                    return Poll::Ready(Err(io::Error::from_raw_os_error(-e)));
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Queues `slices` (up to [`SEND_MAX`] bytes) as one send; the bytes taken.
    fn poll_send(&mut self, cx: &mut Context<'_>, slices: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Err(e)) = self.poll_sent(cx) {
            return Poll::Ready(Err(e));
        }
        if self.send.is_some() {
            return Poll::Pending;
        }
        let mut buf = std::mem::take(&mut self.tx);
        buf.clear();
        for slice in slices {
            let room = SEND_MAX - buf.len();
            buf.extend_from_slice(&slice[..slice.len().min(room)]);
        }
        let taken = buf.len();
        if taken > 0 {
            self.queue_send(buf, 0)?;
        } else {
            self.tx = buf;
        }
        Poll::Ready(Ok(taken))
    }
}

impl AsyncRead for UringStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.rx_start < this.rx_end {
                let n = (this.rx_end - this.rx_start).min(out.remaining());
                out.put_slice(&this.rx[this.rx_start..this.rx_start + n]);
                this.rx_start += n;
                return Poll::Ready(Ok(()));
            }
            if this.eof || out.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let filled = out.filled().len();
            match this.recv {
                Receiving::Idle => this.queue_recv()?,
                Receiving::SingleShot(op) => match this.poll_single_recv(op, cx) {
                    Poll::Pending if this.socket_news(cx, Interest::READABLE) => continue,
                    polled => std::task::ready!(polled)?,
                },
                Receiving::Multishot(op) => {
                    match this.poll_multishot(op, cx, out) {
                        Poll::Pending if this.socket_news(cx, Interest::READABLE) => continue,
                        polled => std::task::ready!(polled)?,
                    }
                    if out.filled().len() > filled {
                        return Poll::Ready(Ok(()));
                    }
                }
            }
        }
    }
}

impl AsyncWrite for UringStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().poll_send(cx, &[io::IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_send(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_sent(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.poll_sent(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(this.socket().shutdown(std::net::Shutdown::Write)),
            other => other,
        }
    }
}

impl Drop for UringStream {
    fn drop(&mut self) {
        // Out of tokio's reactor before the socket may close (`part` may close it now).
        drop(self.watch.take());
        let Some(socket) = self.socket.take() else { return };
        // Ends the receive and send in flight now (a receive would otherwise wait for the peer),
        // then the ring frees their buffers when their completions come.
        let _ = socket.shutdown(std::net::Shutdown::Both);
        let recv = match std::mem::replace(&mut self.recv, Receiving::Idle) {
            Receiving::Idle => None,
            Receiving::SingleShot(op) | Receiving::Multishot(op) => Some(op),
        };
        let ops: Vec<usize> = recv.into_iter().chain(self.send.take().map(|s| s.op)).collect();
        self.ring.part(socket, &ops);
    }
}
