//! What wakes a deferred ring's thread: an epoll instance, itself in tokio's epoll, holding the
//! ring's eventfd and every stream's socket, edge-triggered.
//!
//! Under DEFER_TASKRUN a completion waits, as task work, for the thread to enter the ring, and
//! the kernel tells of it only through the eventfd; some kernels signal that eventfd one RCU grace
//! period late (12-27 ms on 6.18.44-fc, measured: docs/src/load.md#io_uring-on-any-kernel), and
//! the ring's own descriptor never tells of deferred work. The socket itself tells at once: the
//! bytes a receive waits for make it readable (a deferred receive has not taken them yet), and a
//! send waiting for room makes it writable. On the socket's wait queue, io_uring's poll entry is
//! added after epoll's (a stream's socket is watched before its first receive or send is queued),
//! and a wait queue wakes its newest entries first, so the task work is queued, and TASKRUN set,
//! before the thread wakes. The eventfd stays in the set for the completions that no socket
//! announces (a receive cancelled by a shutdown, say).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How many events one drain takes at a time.
const DRAIN_BATCH: usize = 64;

pub(super) struct Wakers {
    epoll: OwnedFd,
    /// Registered with the ring: the kernel signals it when deferred completions wait.
    _eventfd: OwnedFd,
}

impl Wakers {
    /// The set for a deferred `ring`, with its eventfd in it.
    pub(super) fn new(ring: &io_uring::IoUring) -> io::Result<Wakers> {
        let eventfd = eventfd_for(ring).ok_or_else(|| io::Error::other("no eventfd for the ring"))?;
        // SAFETY: epoll_create1 has no memory arguments.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just created, owned by nothing else.
        let wakers = Wakers { epoll: unsafe { OwnedFd::from_raw_fd(epoll) }, _eventfd: eventfd };
        wakers.add(wakers._eventfd.as_raw_fd(), libc::EPOLLIN)?;
        Ok(wakers)
    }

    /// The descriptor to watch: readable when a watched socket or the eventfd has news.
    pub(super) fn fd(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    /// Wakes the ring's thread when `socket` has bytes for a receive or room for a send. Must come
    /// before the first operation on it is queued (see the module's notes). Closing the socket
    /// takes it out of the set.
    pub(super) fn watch(&self, socket: RawFd) -> io::Result<()> {
        self.add(socket, libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP)
    }

    fn add(&self, fd: RawFd, events: i32) -> io::Result<()> {
        let mut event = libc::epoll_event { events: (events | libc::EPOLLET) as u32, u64: fd as u64 };
        // SAFETY: `event` is valid for the call; both descriptors are open.
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Takes the events that woke the thread (their sockets' operations complete when the ring
    /// is entered), so that the next ones make the set readable again; whether there were any.
    pub(super) fn drain(&self) -> bool {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; DRAIN_BATCH];
        let mut any = false;
        loop {
            // SAFETY: `events` has room for DRAIN_BATCH events; no wait (timeout 0).
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), DRAIN_BATCH as i32, 0) };
            any |= n > 0;
            if n < DRAIN_BATCH as i32 {
                return any;
            }
        }
    }
}

/// An eventfd the kernel signals when it holds deferred completions for `ring`'s thread.
fn eventfd_for(ring: &io_uring::IoUring) -> Option<OwnedFd> {
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
