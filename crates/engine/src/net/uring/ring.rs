//! The ring's state and its task: operations queued, submitted in one enter per scheduler pass,
//! and completed into the connections' operations (see the parent module for the design).

use super::buffers::{self, ProvidedBuffers};
use super::wake::Eventfd;
use io_uring::{cqueue, types, IoUring};
use std::collections::{HashSet, VecDeque};
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread::ThreadId;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

/// Bytes one receive asks for (what a connection holds between its reads).
pub(super) const RECV_SIZE: usize = 16 * 1024;
/// Bytes one send takes at most (a larger write returns after this many, as a short write).
pub(super) const SEND_MAX: usize = 256 * 1024;
/// Submission queue entries: more than the sends and receives of one pass at typical
/// concurrencies; a fuller pass submits early (see [`State::push`]).
pub(super) const ENTRIES: u32 = 1024;
pub(super) const COMPLETIONS: u32 = 4 * ENTRIES;
/// At the end, how long the ring waits for operations still in flight before it leaks their
/// buffers rather than free memory the kernel may still write.
pub(super) const DRAIN_WAIT: Duration = Duration::from_millis(10);
pub(super) const DRAIN_TRIES: usize = 100;
/// Attempts at queueing one entry into a full submission queue before the operation fails.
pub(super) const PUSH_TRIES: usize = 100;
/// An enter runs at most this many deferred completions (the kernel's IO_LOCAL_TW_DEFAULT_MAX
/// is 20; the rest wait, without a new eventfd signal). The kernel sets TASKRUN when it leaves
/// work; as a second guard, the ring enters again once this many were reaped since its last enter.
pub(super) const DEFERRED_BATCH: usize = 16;

pub(super) enum OpState {
    /// Queued or submitted; the task to wake when it completes.
    Waiting(Option<Waker>),
    Done(i32),
    /// Its connection is gone: the completion only frees the buffer.
    Orphaned,
}

/// An operation with one completion, into (or from) a buffer of its own.
pub(super) struct SingleOp {
    pub(super) state: OpState,
    pub(super) buf: Vec<u8>,
}

/// One completion of a multishot receive: bytes in a provided buffer, the end, or an error.
pub(super) struct Completion {
    pub(super) result: i32,
    pub(super) buffer: Option<u16>,
    /// Without IORING_CQE_F_MORE: the receive ended, nothing follows.
    pub(super) last: bool,
}

/// A multishot receive: its completions queue up until the connection reads them.
pub(super) struct MultishotOp {
    pub(super) completions: VecDeque<Completion>,
    pub(super) waker: Option<Waker>,
    /// Its connection is gone: completions only give their buffers back.
    pub(super) orphaned: bool,
}

pub(super) enum Op {
    Single(SingleOp),
    Multishot(MultishotOp),
}

/// What a multishot receive's oldest completion said, once its bytes were copied out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Received {
    pub(super) result: i32,
    pub(super) last: bool,
}

/// The ring and its operations, behind one lock (uncontended on the default single thread).
pub(super) struct State {
    pub(super) ring: IoUring,
    /// DEFER_TASKRUN: completions are posted only by an enter with GETEVENTS from this thread.
    pub(super) deferred: bool,
    /// Under SINGLE_ISSUER, the thread that made the ring: the only one the kernel lets enter.
    pub(super) issuer: Option<ThreadId>,
    /// Completions reaped, by any caller, since the last enter (see [`DEFERRED_BATCH`]).
    pub(super) reaped_since_enter: usize,
    /// The owner is gone: the streams' sockets were shut, and the task ends with the last one.
    pub(super) closed: bool,
    /// The sockets of the streams alive on this ring (open until removed, under this lock).
    pub(super) live: HashSet<RawFd>,
    /// Sockets of streams dropped on a thread that may not enter: closed by the ring's task once
    /// the entries queued for them are submitted, so their numbers are not reused before.
    pub(super) parting: Vec<TcpStream>,
    /// Declared after `ring`: freed (when `Drop for State` found nothing in flight) only after it.
    pub(super) buffers: Option<ProvidedBuffers>,
    /// The kernel refused a multishot receive (before 6.0): single-shot from then on.
    pub(super) multishot_refused: bool,
    /// `MSG_*` flags of the multishot receives: none, but a test sets one the kernel refuses.
    pub(super) multishot_flags: i32,
    /// Multishot receives ended for want of a buffer (ENOBUFS), for tests.
    pub(super) out_of_buffers: u64,
    pub(super) ops: Vec<Option<Op>>,
    pub(super) free: Vec<usize>,
    /// Operations the kernel may still complete (a multishot receive counts once, until its last).
    pub(super) in_flight: usize,
    /// Tasks whose operations completed, woken once the lock is released.
    pub(super) wake: Vec<Waker>,
    /// The eventfd rang, or a stream's socket had news on a thread that may not enter (see
    /// [`super::wake`]): the next pass enters the ring, whose deferred completions it posts.
    pub(super) poked: bool,
}

impl State {
    /// Queues `entry` for `op` (which owns any buffer the entry points into, the ring's now),
    /// submitting first if the queue is full; the operation's index.
    pub(super) fn push(&mut self, entry: io_uring::squeue::Entry, op: Op) -> io::Result<usize> {
        let index = self.free.pop().unwrap_or_else(|| {
            self.ops.push(None);
            self.ops.len() - 1
        });
        self.ops[index] = Some(op);
        let entry = entry.user_data(index as u64);
        for _ in 0..PUSH_TRIES {
            // SAFETY: the entry points into `ops[index]`'s buffer, which the ring keeps until the
            // operation's (last) completion, or into provided buffers the ring keeps as long (see
            // `Drop for State` for the end).
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

    /// Whether receives are multishot into the provided buffers.
    pub(super) fn multishot(&self) -> bool {
        self.buffers.is_some() && !self.multishot_refused
    }

    /// Whether an enter is due: entries queued, or completions the kernel holds back since the
    /// completion queue overflowed (only an enter moves them into it).
    /// Under DEFER_TASKRUN also when completions wait for an enter to be posted (TASKRUN_FLAG).
    pub(super) fn enter_due(&mut self) -> bool {
        let maybe_more = self.reaped_since_enter >= DEFERRED_BATCH;
        let poked = self.deferred && self.poked;
        let sq = self.ring.submission();
        // TASKRUN: a deferred ring's completions wait for an enter, or an interrupting ring's
        // (COOP_TASKRUN) for the thread's next system call.
        !sq.is_empty() || sq.cq_overflow() || sq.taskrun() || poked || (self.deferred && maybe_more)
    }

    /// Whether this thread may enter the ring (under SINGLE_ISSUER only the issuer may).
    pub(super) fn may_enter_here(&self) -> bool {
        self.issuer.is_none_or(|issuer| issuer == std::thread::current().id())
    }

    /// Submits what is queued: again after a signal, after reaping when the kernel is busy
    /// (EBUSY: completions to collect first). What is still queued then waits for the next try,
    /// as it does on a thread that may not enter (the ring's task submits it).
    pub(super) fn submit(&mut self) {
        for _ in 0..3 {
            if !self.enter_due() || !self.may_enter_here() {
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
    pub(super) fn enter(&mut self) -> io::Result<usize> {
        self.poked = false;
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
        self.reaped_since_enter = 0;
        entered
    }

    /// Moves the completions into their operations; the tasks to wake go into `wake`. How many.
    pub(super) fn reap(&mut self) -> usize {
        let State { ring, ops, free, in_flight, wake, buffers, out_of_buffers, .. } = self;
        let mut reaped = 0;
        for cqe in ring.completion() {
            reaped += 1;
            let index = cqe.user_data() as usize;
            let buffer = cqueue::buffer_select(cqe.flags());
            if let (Some(id), Some(buffers)) = (buffer, buffers.as_mut()) {
                buffers.lend(id);
            }
            let Some(op) = ops.get_mut(index).and_then(Option::as_mut) else {
                give_back(buffers, buffer);
                continue;
            };
            let freed = match op {
                Op::Single(op) => {
                    *in_flight -= 1;
                    match std::mem::replace(&mut op.state, OpState::Done(cqe.result())) {
                        OpState::Waiting(waker) => wake.extend(waker),
                        OpState::Orphaned => ops[index] = None,
                        OpState::Done(_) => {}
                    }
                    ops[index].is_none()
                }
                Op::Multishot(op) => {
                    let last = !cqueue::more(cqe.flags());
                    *in_flight -= usize::from(last);
                    *out_of_buffers += u64::from(cqe.result() == -libc::ENOBUFS);
                    if op.orphaned {
                        give_back(buffers, buffer);
                        if last {
                            ops[index] = None;
                        }
                    } else {
                        op.completions.push_back(Completion { result: cqe.result(), buffer, last });
                        wake.extend(op.waker.take());
                    }
                    ops[index].is_none()
                }
            };
            if freed {
                free.push(index);
            }
        }
        self.reaped_since_enter += reaped;
        reaped
    }

    pub(super) fn free_op(&mut self, index: usize) {
        self.ops[index] = None;
        self.free.push(index);
    }

    /// The operation's result and buffer once it completed (freeing it), else the waker is kept.
    pub(super) fn poll_op(&mut self, index: usize, cx: &Context<'_>) -> Poll<(i32, Vec<u8>)> {
        let Some(Op::Single(op)) = self.ops[index].as_mut() else { unreachable!("a live single-shot operation") };
        match &mut op.state {
            OpState::Done(result) => {
                let result = *result;
                let Some(Op::Single(op)) = self.ops[index].take() else { unreachable!() };
                self.free.push(index);
                Poll::Ready((result, op.buf))
            }
            OpState::Waiting(waker) => {
                keep_waker(waker, cx);
                Poll::Pending
            }
            OpState::Orphaned => unreachable!("an orphaned operation has no connection to poll it"),
        }
    }

    /// The oldest completion of multishot receive `index`, its bytes passed to `consume` and its
    /// buffer given back at once (the last one frees the operation); else the waker is kept.
    pub(super) fn poll_multishot(
        &mut self,
        index: usize,
        cx: &Context<'_>,
        consume: impl FnOnce(&[u8]),
    ) -> Poll<Received> {
        let Some(Op::Multishot(op)) = self.ops[index].as_mut() else { unreachable!("a live multishot receive") };
        let Some(completion) = op.completions.pop_front() else {
            keep_waker(&mut op.waker, cx);
            return Poll::Pending;
        };
        let Completion { mut result, buffer, last } = completion;
        if let (Some(id), Some(buffers)) = (buffer, self.buffers.as_ref()) {
            match buffers.received(id, result.max(0) as usize) {
                Some(bytes) if result > 0 => consume(bytes),
                Some(_) => {}
                None => result = -libc::EIO,
            }
        } else if result > 0 {
            // Bytes without a buffer: not what this kernel should post.
            result = -libc::EIO;
        }
        give_back(&mut self.buffers, buffer);
        if last {
            self.free_op(index);
        }
        Poll::Ready(Received { result, last })
    }

    /// Leaves the operation to the ring: its completion frees the buffer; a multishot receive's
    /// provided buffers go back now, and those of its late completions as they come.
    pub(super) fn orphan(&mut self, index: usize) {
        let op = self.ops[index].as_mut().expect("a live operation");
        match op {
            Op::Single(op) => match op.state {
                OpState::Done(_) => self.free_op(index),
                _ => op.state = OpState::Orphaned,
            },
            Op::Multishot(op) => {
                op.orphaned = true;
                let ended = op.completions.back().is_some_and(|c| c.last);
                for completion in std::mem::take(&mut op.completions) {
                    give_back(&mut self.buffers, completion.buffer);
                }
                if ended {
                    self.free_op(index);
                }
            }
        }
    }
}

/// Gives a completion's provided buffer (if it named one) back to the kernel.
pub(super) fn give_back(buffers: &mut Option<ProvidedBuffers>, buffer: Option<u16>) {
    if let (Some(id), Some(buffers)) = (buffer, buffers.as_mut()) {
        buffers.give_back(id);
    }
}

/// Keeps the task to wake, unless the one kept already wakes it.
pub(super) fn keep_waker(waker: &mut Option<Waker>, cx: &Context<'_>) {
    if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        *waker = Some(cx.waker().clone());
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // Connections shut their sockets when dropped, so what is left in flight ends quickly.
        // On a thread that may not enter, nothing more is posted: what is in flight then leaks.
        let wait = types::Timespec::new().nsec(DRAIN_WAIT.as_nanos() as u32);
        let args = types::SubmitArgs::new().timespec(&wait);
        let tries = if self.may_enter_here() { DRAIN_TRIES } else { 1 };
        for try_ in 1..=tries {
            self.reap();
            if self.in_flight == 0 {
                // No receive left to pick a provided buffer: they can go (after `ring`).
                if self.buffers.is_some() {
                    let _ = self.ring.submitter().unregister_buf_ring(buffers::GROUP);
                }
                return;
            }
            if try_ < tries {
                let _ = self.ring.submitter().submit_with_args(1, &args);
            }
        }
        // The kernel never answered for some: their buffers must outlive it, so they are leaked.
        for op in self.ops.drain(..).flatten() {
            if let Op::Single(op) = op {
                std::mem::forget(op.buf);
            }
        }
        if let Some(buffers) = self.buffers.take() {
            buffers.leak();
        }
    }
}

/// One ring, shared by the connections of a target, and the wake-up its task waits for.
pub(super) struct Ring {
    /// What tells the ring's task of completions: the ring's descriptor, or under DEFER_TASKRUN
    /// its eventfd (the streams' sockets tell their own tasks: see [`super::wake`]).
    // Declared before `eventfd` and `state`, so deregistered before the descriptor closes.
    pub(super) fd: AsyncFd<RawFd>,
    pub(super) eventfd: Option<Eventfd>,
    pub(super) state: Mutex<State>,
    pub(super) submit_wanted: Notify,
}

impl Ring {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `f` on the state, then wakes the tasks whose operations it saw complete (outside the lock).
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
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
    pub(super) fn poll_op(&self, index: usize, cx: &Context<'_>) -> Poll<(i32, Vec<u8>)> {
        self.with(|state| {
            state.reap();
            state.poll_op(index, cx)
        })
    }

    /// The oldest completion of multishot receive `index` (see [`State::poll_multishot`]).
    pub(super) fn poll_multishot(&self, index: usize, cx: &Context<'_>, consume: impl FnOnce(&[u8])) -> Poll<Received> {
        self.with(|state| {
            state.reap();
            state.poll_multishot(index, cx, consume)
        })
    }

    pub(super) fn push(&self, entry: io_uring::squeue::Entry, op: Op) -> io::Result<usize> {
        let index = self.with(|state| state.push(entry, op))?;
        self.submit_wanted.notify_one();
        Ok(index)
    }

    /// Whether completions wait for the issuer's enters (DEFER_TASKRUN).
    pub(super) fn deferred(&self) -> bool {
        self.lock().deferred
    }

    /// A stream's socket had news: enters the ring with GETEVENTS so the kernel posts the
    /// completions it holds, and reaps them; whether it did. On a thread that may not enter, the
    /// ring's task is asked to.
    pub(super) fn post_deferred(&self) -> bool {
        let entered = self.with(|state| {
            if !state.may_enter_here() {
                state.poked = true;
                return false;
            }
            let _ = state.enter();
            state.reap();
            true
        });
        if !entered {
            self.submit_wanted.notify_one();
        }
        entered
    }

    /// The `MSG_*` flags of a multishot receive, if this ring receives multishot.
    pub(super) fn multishot_flags(&self) -> Option<i32> {
        self.with(|state| state.multishot().then_some(state.multishot_flags))
    }

    /// A multishot receive was refused: this ring receives single-shot from now on.
    pub(super) fn refuse_multishot(&self) {
        self.with(|state| state.multishot_refused = true);
    }

    /// One pass of the ring's task: submits, closes the parting sockets once nothing is queued
    /// for them, reaps. Whether an enter is still due (the kernel refused the entries for now,
    /// or completions overflowed again, or deferred completions wait), and whether the ring is
    /// done (closed, no stream left, nothing in flight).
    pub(super) fn submit_and_reap(&self) -> (bool, bool) {
        self.with(|state| {
            state.submit();
            if state.ring.submission().is_empty() {
                state.parting.clear();
            }
            state.reap();
            let done = state.closed && state.live.is_empty() && state.parting.is_empty() && state.in_flight == 0;
            (state.enter_due(), done)
        })
    }

    /// A new stream's socket: the ring shuts it if its owner goes first (see [`Ring::close`]).
    pub(super) fn adopt(&self, socket: &TcpStream) {
        self.with(|state| state.live.insert(socket.as_raw_fd()));
    }

    /// A stream is gone: leaves its operations `ops` to the ring, and closes `socket` once
    /// nothing queued names it: a queued entry must not meet its descriptor's number reused by
    /// another file. Queued entries are submitted here if this thread may enter; else the
    /// socket stays open until the ring's task has submitted them.
    pub(super) fn part(&self, socket: TcpStream, ops: &[usize]) {
        let socket = self.with(|state| {
            state.live.remove(&socket.as_raw_fd());
            ops.iter().for_each(|&op| state.orphan(op));
            if !ops.is_empty() {
                // A busy kernel takes the entries after some completions.
                for _ in 0..DRAIN_TRIES {
                    state.submit();
                    if state.ring.submission().is_empty() || !state.may_enter_here() {
                        break;
                    }
                    state.reap();
                }
                if !state.ring.submission().is_empty() {
                    state.parting.push(socket);
                    return None;
                }
            }
            Some(socket)
        });
        drop(socket);
        // Their completions must be reaped even if no connection is left to ask, and a closed
        // ring's task ends with its last stream.
        self.submit_wanted.notify_one();
    }

    /// The owner is gone: shuts every stream's socket, so what waits on them ends (reads see the
    /// end, writes fail) and their tasks drop them; the ring's task ends after the last one.
    pub(super) fn close(&self) {
        self.with(|state| {
            state.closed = true;
            for &fd in &state.live {
                // SAFETY: no memory is passed; `fd` is open, as a stream removes its socket from
                // `live` under this lock before it closes it.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            }
        });
        self.submit_wanted.notify_one();
    }

    /// The ring's task: submits what the connections queued, and wakes them as completions come;
    /// ends once the owner and every stream are gone and nothing is in flight.
    pub(super) async fn drive(self: Arc<Self>) {
        loop {
            tokio::select! {
                biased;
                _ = self.submit_wanted.notified() => {}
                ready = self.fd.readable() => match ready {
                    // Cleared before reaping: a completion after this wakes the task again.
                    Ok(mut guard) => {
                        guard.clear_ready();
                        if self.eventfd.as_ref().is_some_and(Eventfd::drain) {
                            self.with(|state| state.poked = true);
                        }
                    }
                    Err(_) => return,
                },
            }
            let (due, done) = self.submit_and_reap();
            if done {
                return;
            }
            if due {
                // Tried again after the other tasks had a turn.
                tokio::task::yield_now().await;
                self.submit_wanted.notify_one();
            }
        }
    }
}

/// How a ring is set up: room for every connection's receive and send at once, up to
/// COMPLETIONS / 2 connections (beyond, the kernel holds the overflow until the next enter: see
/// `enter_due`), and how its completions reach the thread:
/// - `Deferred`: SINGLE_ISSUER + DEFER_TASKRUN (6.1), posted only by this thread's enters;
/// - `Cooperative`: COOP_TASKRUN (5.19), task work run at the thread's next system call instead of
///   an IPI while it runs (a thread asleep is still woken): for a ring with one thread;
/// - `Interrupting`: task work that interrupts the submitting thread at once (any kernel): for a
///   multi-threaded runtime, whose submitting thread may run other tasks for long.
pub(super) fn builder(kind: Completions) -> io_uring::Builder {
    let mut builder = IoUring::builder();
    builder.setup_cqsize(COMPLETIONS);
    match kind {
        Completions::Deferred => {
            builder.setup_single_issuer().setup_defer_taskrun().setup_taskrun_flag();
        }
        Completions::Cooperative => {
            builder.setup_coop_taskrun().setup_taskrun_flag();
        }
        Completions::Interrupting => {}
    }
    builder
}

/// How a ring's completions reach its thread (see [`builder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completions {
    Deferred,
    Cooperative,
    Interrupting,
}
