//! io_uring under the engine's sockets (`--io uring`): the same `AsyncRead`/`AsyncWrite` the
//! protocols already use, so there is still one driver loop and one implementation per protocol.
//!
//! A read or a write does not call the kernel: it queues a receive or a send on the target's ring
//! and asks the ring's task to submit. That task runs after the tasks already woken, so every
//! connection that went on in the same pass of the scheduler (answers that arrived together) is
//! submitted in one `io_uring_enter`: the batch is bounded by one pass, and no call waits for a
//! timer. Completions are noticed through the ring's descriptor in tokio's epoll, like any socket.
//!
//! Before the first ring, a self-check ([`probe`]) measures how soon a thread asleep on each kind
//! of ring has a loopback answer in hand, against epoll: a kind that waits for something else to
//! wake the thread is not used, and where no kind is prompt io_uring is not used at all.
//!
//! On a single-threaded runtime (the engine's default) the ring is SINGLE_ISSUER + DEFER_TASKRUN
//! where the kernel has them (6.1) and the self-check found them prompt: the kernel then finishes
//! a completion only when that thread enters the ring, instead of interrupting it (a task-work
//! signal) for each one, which costs the client CPU (perf: `get_signal`'s lock, reschedule IPIs;
//! the share measured: bench/results/code-notes-2026-12.md#io_uring-task-work-signals). The thread
//! learns of pending completions from the streams' sockets and the ring's eventfd ([`wake`]), and
//! the stream's task (or the ring's, for the eventfd) enters with GETEVENTS to have them posted. Elsewhere the ring is cooperative
//! (COOP_TASKRUN) on a single thread and interrupting on several ([`Completions`]).
//!
//! Where the kernel has them (6.0), a stream receives through one multishot receive, armed at its
//! first read, into the ring's provided buffers ([`buffers`]): the kernel posts a completion per
//! message without being asked again, and the read copies the bytes out and gives the buffer back
//! at once. A receive that ends (out of buffers, or the kernel's choice) is armed again by the
//! read after its queued completions; after ENOBUFS that read is single-shot, so that streams
//! holding the buffers unread cannot make another spin. Elsewhere, every read queues one receive
//! into the stream's own buffer (decided once per ring).
//!
//! Buffers belong to the ring while the kernel may use them; a connection dropped with operations
//! in flight shuts its socket (they end at once) and leaves their buffers to the ring. Under
//! SINGLE_ISSUER a connection dropped on another thread does not enter: its socket stays open
//! until the ring's task has submitted what was queued for it.
//!
//! The ring's task outlives the [`RingOwner`] as long as a stream does (a detached HTTP/2 probe's
//! connection, say): the owner's drop shuts every stream's socket, so their tasks see the end and
//! drop them, and the task ends after the last one, freeing the ring.

mod buffers;
pub mod probe;
mod ring;
mod stream;
mod wake;

pub use buffers::BufferShape;
use buffers::ProvidedBuffers;

use crate::EngineError;
pub use ring::Completions;
use ring::{Ring, State, ENTRIES};
use std::collections::HashSet;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
pub use stream::UringStream;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::Notify;
use wake::Eventfd;

/// Whether this process can use io_uring, and why not: the kernel may lack it, refuse it (the
/// `kernel.io_uring_disabled` sysctl, a seccomp filter), or stall its completions (the self-check).
/// Why not is an [`EngineError::Machine`].
pub fn available() -> Result<(), EngineError> {
    probe::check().as_ref().map(drop).map_err(|why| EngineError::Machine(why.to_string()))
}

/// One line on how io_uring runs here and why (the self-check's figures), or why it does not.
pub fn describe() -> String {
    match probe::check() {
        Ok(check) => check.describe(),
        Err(why) => why.to_string(),
    }
}

/// A target's ring; its task ends after the owner and the last stream.
pub struct RingOwner {
    ring: Arc<Ring>,
}

/// How a ring's streams receive.
#[derive(Debug, Clone, Copy)]
pub enum Receive {
    /// One multishot receive per stream into provided buffers of this shape, where the kernel
    /// has them (6.0), else single-shot.
    Multishot(BufferShape),
    /// A receive per read, into the stream's own buffer.
    SingleShot,
}

impl Default for Receive {
    fn default() -> Self {
        Receive::Multishot(BufferShape::default())
    }
}

impl RingOwner {
    /// A ring on the current tokio runtime, or why io_uring cannot be used.
    pub fn start() -> Result<RingOwner, EngineError> {
        Self::start_with(Receive::default())
    }

    /// A ring whose streams receive as `receive` says, once the self-check passed. On a
    /// single-threaded runtime it defers completions to this thread's enters where the kernel
    /// can and the self-check found them prompt (every submission must then come from this thread).
    pub fn start_with(receive: Receive) -> Result<RingOwner, EngineError> {
        let check = probe::check().as_ref().map_err(|why| EngineError::Machine(why.to_string()))?;
        Self::start_as(receive, check.defer()).map_err(EngineError::Machine)
    }

    /// A ring that defers its completions (SINGLE_ISSUER + DEFER_TASKRUN) if `defer`, the
    /// runtime is single-threaded and the kernel can; else a cooperative one on a single-threaded
    /// runtime, an interrupting one on a multi-threaded one (see [`Completions`]); no self-check.
    pub(super) fn start_as(receive: Receive, defer: bool) -> Result<RingOwner, String> {
        let single_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|rt| rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
        let defer = defer && single_threaded;
        // A kernel before 6.1 refuses DEFER_TASKRUN, one before 5.19 COOP_TASKRUN: the ring then
        // interrupts the thread.
        let deferred = defer.then(|| ring::builder(Completions::Deferred).build(ENTRIES).ok()).flatten();
        let deferred = deferred.and_then(|ring| Eventfd::new(&ring).ok().map(|eventfd| (ring, eventfd)));
        let (ring, eventfd) = match deferred {
            Some((ring, eventfd)) => (ring, Some(eventfd)),
            None => {
                let cooperative = single_threaded.then(|| ring::builder(Completions::Cooperative).build(ENTRIES).ok());
                let ring = match cooperative.flatten() {
                    Some(ring) => Ok(ring),
                    None => ring::builder(Completions::Interrupting).build(ENTRIES),
                };
                (ring.map_err(|e| format!("io_uring is not available: {e}"))?, None)
            }
        };
        let watched = eventfd.as_ref().map_or(ring.as_raw_fd(), Eventfd::fd);
        // SAFETY: the descriptor is the ring's or its eventfd, which `Ring` keeps open (in
        // `eventfd` and `state`, declared after `fd`) until this registration is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(watched, Interest::READABLE) }
            .map_err(|e| format!("cannot watch the io_uring descriptor: {e}"))?;
        let deferred = eventfd.is_some();
        // A kernel without buffer rings (before 5.19) or that refuses this one: single-shot.
        let buffers = match receive {
            Receive::Multishot(shape) => ProvidedBuffers::register(&ring, shape).ok(),
            Receive::SingleShot => None,
        };
        let state = State {
            ring,
            deferred,
            // The kernel takes the thread that made the ring as its only issuer.
            issuer: deferred.then(|| std::thread::current().id()),
            reaped_since_enter: 0,
            closed: false,
            live: HashSet::new(),
            parting: Vec::new(),
            buffers,
            multishot_refused: false,
            multishot_flags: 0,
            out_of_buffers: 0,
            ops: Vec::new(),
            free: Vec::new(),
            in_flight: 0,
            wake: Vec::new(),
            poked: false,
        };
        let ring = Arc::new(Ring { fd, eventfd, state: Mutex::new(state), submit_wanted: Notify::new() });
        tokio::spawn(ring.clone().drive());
        Ok(RingOwner { ring })
    }

    /// `socket` (connected) as a stream whose reads and writes go through this ring.
    pub fn stream(&self, socket: TcpStream) -> io::Result<UringStream> {
        // A non-blocking socket makes io_uring answer EAGAIN instead of waiting for readiness.
        socket.set_nonblocking(false)?;
        UringStream::new(self.ring.clone(), socket)
    }
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
        self.ring.close();
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_lifecycle;
#[cfg(test)]
mod tests_prompt;
