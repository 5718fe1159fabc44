//! io_uring under the engine's sockets (`--io uring`): the same `AsyncRead`/`AsyncWrite` the
//! protocols already use, so there is still one driver loop and one implementation per protocol.
//!
//! A read or a write does not call the kernel: it queues a receive or a send on the target's ring
//! and asks the ring's task to submit. That task runs after the tasks already woken, so every
//! connection that went on in the same pass of the scheduler (answers that arrived together) is
//! submitted in one `io_uring_enter`: the batch is bounded by one pass, and no call waits for a
//! timer. Completions are noticed through the ring's descriptor in tokio's epoll, like any socket.
//!
//! On a single-threaded runtime (the engine's default) the ring is SINGLE_ISSUER + DEFER_TASKRUN
//! where the kernel has them (6.1): the kernel then finishes a completion only when that thread
//! enters the ring, instead of interrupting it (a task-work signal) for each one — which cost
//! about a quarter of the client's CPU here (perf: `get_signal`'s lock, reschedule IPIs). It
//! tells of pending completions through an eventfd in tokio's epoll, and the ring's task enters
//! with GETEVENTS to have them posted.
//!
//! Buffers belong to the ring while the kernel may use them; a connection dropped with operations
//! in flight shuts its socket (they end at once) and leaves their buffers to the ring.

use io_uring::{opcode, types, IoUring};
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::sync::Notify;

/// Bytes one receive asks for (what a connection holds between its reads).
const RECV_SIZE: usize = 16 * 1024;
/// Bytes one send takes at most (a larger write returns after this many, as a short write).
const SEND_MAX: usize = 256 * 1024;
/// Submission queue entries: more than the sends and receives of one pass at typical
/// concurrencies; a fuller pass submits early (see [`State::push`]).
const ENTRIES: u32 = 1024;
const COMPLETIONS: u32 = 4 * ENTRIES;
/// At the end, how long the ring waits for operations still in flight before it leaks their
/// buffers rather than free memory the kernel may still write.
const DRAIN_WAIT: Duration = Duration::from_millis(10);
const DRAIN_TRIES: usize = 100;
/// Attempts at queueing one entry into a full submission queue before the operation fails.
const PUSH_TRIES: usize = 100;
/// An enter runs at most this many deferred completions (the kernel's IO_LOCAL_TW_DEFAULT_MAX
/// is 20; the rest wait, without a new eventfd signal): a pass that reaped this many enters again.
const DEFERRED_BATCH: usize = 16;

/// Whether this kernel lets this process use io_uring (it may be missing, or turned off by the
/// `kernel.io_uring_disabled` sysctl or a seccomp filter), and why not.
pub fn available() -> Result<(), String> {
    IoUring::new(2).map(drop).map_err(|e| format!("io_uring is not available: {e}"))
}

enum OpState {
    /// Queued or submitted; the task to wake when it completes.
    Waiting(Option<Waker>),
    Done(i32),
    /// Its connection is gone: the completion only frees the buffer.
    Orphaned,
}

struct Op {
    state: OpState,
    buf: Vec<u8>,
}

/// The ring and its operations, behind one lock (uncontended on the default single thread).
struct State {
    ring: IoUring,
    /// DEFER_TASKRUN: completions are posted only by an enter with GETEVENTS from this thread.
    deferred: bool,
    /// The last pass reaped a full batch: the kernel may hold more deferred completions.
    may_hold_more: bool,
    ops: Vec<Option<Op>>,
    free: Vec<usize>,
    /// Operations the kernel may still complete.
    in_flight: usize,
    /// Tasks whose operations completed, woken once the lock is released.
    wake: Vec<Waker>,
}

impl State {
    /// Queues `entry` for an operation that owns `buf` (the ring's now), submitting first if the
    /// queue is full; the operation's index.
    fn push(&mut self, entry: io_uring::squeue::Entry, buf: Vec<u8>) -> io::Result<usize> {
        let index = self.free.pop().unwrap_or_else(|| {
            self.ops.push(None);
            self.ops.len() - 1
        });
        self.ops[index] = Some(Op { state: OpState::Waiting(None), buf });
        let entry = entry.user_data(index as u64);
        for _ in 0..PUSH_TRIES {
            // SAFETY: the entry points into `ops[index].buf`, which the ring keeps until the
            // operation's completion (see `Drop for State` for the end).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                self.in_flight += 1;
                return Ok(index);
            }
            // Full: submit what is queued; if the kernel is busy, completions first make room.
            self.submit();
            self.reap();
        }
        self.ops[index] = None;
        self.free.push(index);
        Err(io::Error::other("the io_uring submission queue stays full"))
    }

    /// Whether an enter is due: entries queued, or completions the kernel holds back since the
    /// completion queue overflowed (only an enter moves them into it).
    /// Under DEFER_TASKRUN also when completions wait for an enter to be posted (TASKRUN_FLAG).
    fn enter_due(&mut self) -> bool {
        let sq = self.ring.submission();
        !sq.is_empty() || sq.cq_overflow() || (self.deferred && (sq.taskrun() || self.may_hold_more))
    }

    /// Submits what is queued: again after a signal, after reaping when the kernel is busy
    /// (EBUSY: completions to collect first). What is still queued then waits for the next try.
    fn submit(&mut self) {
        for _ in 0..3 {
            if !self.enter_due() {
                return;
            }
            match self.enter() {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => {
                    self.reap();
                }
            }
        }
    }

    /// One io_uring_enter: submits what is queued and, under DEFER_TASKRUN, posts the
    /// completions the kernel holds for this thread (GETEVENTS, without waiting for any).
    fn enter(&mut self) -> io::Result<usize> {
        if !self.deferred {
            return self.ring.submit();
        }
        let queued = self.ring.submission().len() as u32;
        let getevents = io_uring::EnterFlags::GETEVENTS.bits();
        // Posting completions would signal the eventfd, and wake this task again for nothing.
        self.ring.completion().disable_eventfd();
        // SAFETY: no argument is passed; the entries queued point into buffers the ring keeps
        // (see `push`).
        let entered = unsafe { self.ring.submitter().enter::<libc::sigset_t>(queued, 0, getevents, None) };
        self.ring.completion().enable_eventfd();
        // Completions that came meanwhile went unsignalled, but set TASKRUN (see `enter_due`):
        // the flag is read after the eventfd is enabled again, so none is missed.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        self.may_hold_more = false;
        entered
    }

    /// Moves the completions into their operations; the tasks to wake go into `wake`. How many.
    fn reap(&mut self) -> usize {
        let State { ring, ops, free, in_flight, wake, .. } = self;
        let mut reaped = 0;
        for cqe in ring.completion() {
            reaped += 1;
            let index = cqe.user_data() as usize;
            let Some(op) = ops.get_mut(index).and_then(Option::as_mut) else { continue };
            *in_flight -= 1;
            match std::mem::replace(&mut op.state, OpState::Done(cqe.result())) {
                OpState::Waiting(waker) => wake.extend(waker),
                OpState::Orphaned => {
                    ops[index] = None;
                    free.push(index);
                }
                OpState::Done(_) => {}
            }
        }
        reaped
    }

    /// The operation's result and buffer once it completed (freeing it), else the waker is kept.
    fn poll_op(&mut self, index: usize, cx: &Context<'_>) -> Poll<(i32, Vec<u8>)> {
        let op = self.ops[index].as_mut().expect("a live operation");
        match &mut op.state {
            OpState::Done(result) => {
                let result = *result;
                let op = self.ops[index].take().expect("a live operation");
                self.free.push(index);
                Poll::Ready((result, op.buf))
            }
            OpState::Waiting(waker) => {
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            OpState::Orphaned => unreachable!("an orphaned operation has no connection to poll it"),
        }
    }

    /// Leaves the operation to the ring: its completion frees the buffer.
    fn orphan(&mut self, index: usize) {
        let op = self.ops[index].as_mut().expect("a live operation");
        if let OpState::Done(_) = op.state {
            self.ops[index] = None;
            self.free.push(index);
        } else {
            op.state = OpState::Orphaned;
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // Connections shut their sockets when dropped, so what is left in flight ends quickly.
        let wait = types::Timespec::new().nsec(DRAIN_WAIT.as_nanos() as u32);
        let args = types::SubmitArgs::new().timespec(&wait);
        for _ in 0..DRAIN_TRIES {
            self.reap();
            if self.in_flight == 0 {
                return;
            }
            let _ = self.ring.submitter().submit_with_args(1, &args);
        }
        // The kernel never answered for some: their buffers must outlive it, so they are leaked.
        for op in self.ops.drain(..).flatten() {
            std::mem::forget(op.buf);
        }
    }
}

/// One ring, shared by the connections of a target, and the wake-up its task waits for.
pub struct Ring {
    /// What tells of completions: the ring's descriptor, or under DEFER_TASKRUN its eventfd.
    // Declared before `eventfd` and `state`, so deregistered before the descriptor closes.
    fd: AsyncFd<RawFd>,
    _eventfd: Option<OwnedFd>,
    state: Mutex<State>,
    submit_wanted: Notify,
}

impl Ring {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `f` on the state, then wakes the tasks whose operations it saw complete (outside the lock).
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let (result, wake) = {
            let mut state = self.lock();
            let result = f(&mut state);
            (result, std::mem::take(&mut state.wake))
        };
        wake.into_iter().for_each(Waker::wake);
        result
    }

    /// The result and buffer of `index` once completed; reaps first, so a completion already
    /// posted is seen without waiting for the ring's task.
    fn poll_op(&self, index: usize, cx: &Context<'_>) -> Poll<(i32, Vec<u8>)> {
        self.with(|state| {
            state.reap();
            state.poll_op(index, cx)
        })
    }

    fn push(&self, entry: io_uring::squeue::Entry, buf: Vec<u8>) -> io::Result<usize> {
        let index = self.with(|state| state.push(entry, buf))?;
        self.submit_wanted.notify_one();
        Ok(index)
    }

    /// True when an enter is still due (the kernel refused the entries for now, or completions
    /// overflowed again).
    /// Also true when deferred completions may be left in the kernel (a full batch came).
    fn submit_and_reap(&self) -> bool {
        self.with(|state| {
            state.submit();
            let reaped = state.reap();
            state.may_hold_more = state.deferred && reaped >= DEFERRED_BATCH;
            state.enter_due()
        })
    }

    /// The ring's task: submits what the connections queued, and wakes them as completions come.
    async fn drive(self: Arc<Self>) {
        loop {
            tokio::select! {
                biased;
                _ = self.submit_wanted.notified() => {}
                ready = self.fd.readable() => match ready {
                    // Cleared before reaping: a completion after this wakes the task again.
                    Ok(mut guard) => guard.clear_ready(),
                    Err(_) => return,
                },
            }
            if self.submit_and_reap() {
                // Tried again after the other tasks had a turn.
                tokio::task::yield_now().await;
                self.submit_wanted.notify_one();
            }
        }
    }
}

/// A target's ring and its task, which ends with it.
pub struct RingOwner {
    ring: Arc<Ring>,
    task: tokio::task::AbortHandle,
}

impl RingOwner {
    /// A ring on the current tokio runtime, or why io_uring cannot be used.
    pub fn start() -> Result<RingOwner, String> {
        let single_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|rt| rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
        Self::start_with(single_thread)
    }

    /// A ring, deferring completions to this thread's enters when `defer` and the kernel can
    /// (every submission must then come from this thread, as on a single-threaded runtime).
    fn start_with(defer: bool) -> Result<RingOwner, String> {
        // Room for every connection's receive and send at once, up to COMPLETIONS / 2 connections;
        // beyond, the kernel holds the overflow until the next enter (see `enter_due`).
        let build = |defer: bool| {
            let mut builder = IoUring::builder();
            builder.setup_cqsize(COMPLETIONS);
            if defer {
                builder.setup_single_issuer().setup_defer_taskrun().setup_taskrun_flag();
            }
            builder.build(ENTRIES)
        };
        // A kernel before 6.1 refuses DEFER_TASKRUN: the ring interrupts the thread instead.
        let deferred = defer.then(|| build(true).ok()).flatten();
        let deferred = deferred.and_then(|ring| eventfd_for(&ring).map(|eventfd| (ring, eventfd)));
        let (ring, eventfd) = match deferred {
            Some((ring, eventfd)) => (ring, Some(eventfd)),
            None => (build(false).map_err(|e| format!("io_uring is not available: {e}"))?, None),
        };
        let watched = eventfd.as_ref().map_or(ring.as_raw_fd(), AsRawFd::as_raw_fd);
        // SAFETY: the descriptor is the ring's or its eventfd, which `Ring` keeps open (in
        // `eventfd` and `state`, declared after `fd`) until this registration is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(watched, Interest::READABLE) }
            .map_err(|e| format!("cannot watch the io_uring descriptor: {e}"))?;
        let deferred = eventfd.is_some();
        let state = State {
            ring,
            deferred,
            may_hold_more: false,
            ops: Vec::new(),
            free: Vec::new(),
            in_flight: 0,
            wake: Vec::new(),
        };
        let ring = Arc::new(Ring { fd, _eventfd: eventfd, state: Mutex::new(state), submit_wanted: Notify::new() });
        let task = tokio::spawn(ring.clone().drive()).abort_handle();
        Ok(RingOwner { ring, task })
    }

    /// `socket` (connected) as a stream whose reads and writes go through this ring.
    pub fn stream(&self, socket: TcpStream) -> io::Result<UringStream> {
        // A non-blocking socket makes io_uring answer EAGAIN instead of waiting for readiness.
        socket.set_nonblocking(false)?;
        Ok(UringStream {
            ring: self.ring.clone(),
            socket,
            recv: None,
            rx: Vec::new(),
            rx_start: 0,
            rx_end: 0,
            eof: false,
            send: None,
            tx: Vec::new(),
        })
    }
}

/// An eventfd the kernel signals when it holds deferred completions for `ring`'s thread.
fn eventfd_for(ring: &IoUring) -> Option<OwnedFd> {
    // SAFETY: eventfd has no memory arguments; a descriptor it returns is ours to own.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return None;
    }
    // SAFETY: just created above, owned by nothing else.
    let eventfd = unsafe { OwnedFd::from_raw_fd(fd) };
    ring.submitter().register_eventfd(eventfd.as_raw_fd()).ok()?;
    Some(eventfd)
}

impl RingOwner {
    /// Whether completions wait for this thread's enters (SINGLE_ISSUER + DEFER_TASKRUN).
    #[cfg(test)]
    fn deferred(&self) -> bool {
        self.ring.lock().deferred
    }
}

impl Drop for RingOwner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A send in flight: the bytes of `buf[from..len]` are still to go.
#[derive(Clone, Copy)]
struct Sending {
    op: usize,
    from: usize,
    len: usize,
}

/// A connected TCP socket read and written through a [`Ring`].
pub struct UringStream {
    ring: Arc<Ring>,
    socket: TcpStream,
    recv: Option<usize>,
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
    fn fd(&self) -> types::Fd {
        types::Fd(self.socket.as_raw_fd())
    }

    fn queue_recv(&mut self) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.rx);
        buf.resize(RECV_SIZE, 0);
        let entry = opcode::Recv::new(self.fd(), buf.as_mut_ptr(), buf.len() as u32).build();
        self.recv = Some(self.ring.push(entry, buf)?);
        Ok(())
    }

    fn queue_send(&mut self, buf: Vec<u8>, from: usize) -> io::Result<()> {
        let len = buf.len();
        let entry =
            opcode::Send::new(self.fd(), buf[from..].as_ptr(), (len - from) as u32).flags(libc::MSG_NOSIGNAL).build();
        let op = self.ring.push(entry, buf)?;
        self.send = Some(Sending { op, from, len });
        Ok(())
    }

    /// Ready when no send is in flight any more (the last one wholly sent, or its error).
    fn poll_sent(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        while let Some(Sending { op, from, len }) = self.send {
            let (result, buf) = match self.ring.poll_op(op, cx) {
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
    fn poll_send(&mut self, cx: &Context<'_>, slices: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
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
            let Some(op) = this.recv else {
                this.queue_recv()?;
                continue;
            };
            let (result, buf) = match this.ring.poll_op(op, cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(done) => done,
            };
            this.recv = None;
            this.rx = buf;
            match result {
                0 => this.eof = true,
                n if n > 0 => (this.rx_start, this.rx_end) = (0, n as usize),
                e if e == -libc::EINTR || e == -libc::EAGAIN => {}
                e => return Poll::Ready(Err(io::Error::from_raw_os_error(-e))),
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
            Poll::Ready(Ok(())) => Poll::Ready(this.socket.shutdown(std::net::Shutdown::Write)),
            other => other,
        }
    }
}

impl Drop for UringStream {
    fn drop(&mut self) {
        // Ends the receive and send in flight now (a receive would otherwise wait for the peer),
        // then the ring frees their buffers when their completions come.
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        let ops: Vec<usize> = self.recv.take().into_iter().chain(self.send.take().map(|s| s.op)).collect();
        if ops.is_empty() {
            return;
        }
        self.ring.with(|state| {
            ops.into_iter().for_each(|op| state.orphan(op));
            // Submitted before the socket closes: a queued entry must not meet its descriptor's
            // number reused by another file (a busy kernel takes them after some completions).
            for _ in 0..DRAIN_TRIES {
                state.submit();
                if state.ring.submission().is_empty() {
                    break;
                }
                state.reap();
            }
        });
        // Their completions must be reaped even if no connection is left to ask.
        self.ring.submit_wanted.notify_one();
    }
}

#[cfg(test)]
mod tests;
