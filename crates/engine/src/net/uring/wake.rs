//! What wakes a deferred ring's thread: each stream's socket, in tokio's reactor, and the ring's
//! eventfd for the completions no socket announces.
//!
//! Under DEFER_TASKRUN a completion waits, as task work, for the thread to enter the ring, and
//! the kernel tells of it only through the eventfd; some kernels signal that eventfd one RCU grace
//! period late (12-27 ms on 6.18.44-fc, measured: docs/src/load.md#io_uring-on-any-kernel), and
//! the ring's own descriptor never tells of deferred work. The socket itself tells at once: the
//! bytes a receive waits for make it readable (a deferred receive has not taken them yet), and a
//! send waiting for room makes it writable. So a stream watches its own socket ([`SocketWatch`])
//! and, when it has news, enters the ring from its own task so the kernel posts what it holds.
//! On the socket's wait queue, io_uring's poll entry is added after tokio's (the socket is
//! watched before its first receive or send is queued), and a wait queue wakes its newest entries
//! first, so the task work is queued, and TASKRUN set, before the thread wakes. Waking the
//! stream's task itself, not the ring's through an epoll set of sockets, saves a nested wake-up,
//! a drain and a task switch per answer (measured: bench/results/uring-kernels-2026-12-06.md).

use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::task::{Context, Poll};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The eventfd the kernel signals when it holds deferred completions for a ring's thread.
pub(super) struct Eventfd(OwnedFd);

impl Eventfd {
    /// An eventfd registered with `ring`.
    pub(super) fn new(ring: &io_uring::IoUring) -> io::Result<Eventfd> {
        // SAFETY: eventfd has no memory arguments; a descriptor it returns is ours to own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just created above, owned by nothing else.
        let eventfd = Eventfd(unsafe { OwnedFd::from_raw_fd(fd) });
        ring.submitter().register_eventfd(eventfd.fd())?;
        Ok(eventfd)
    }

    pub(super) fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Takes the signals counted so far, so that the next one makes it readable again; whether
    /// there were any.
    pub(super) fn drain(&self) -> bool {
        let mut count = [0u8; 8];
        // SAFETY: `count` has room for the 8 bytes an eventfd read returns; non-blocking.
        unsafe { libc::read(self.fd(), count.as_mut_ptr().cast(), count.len()) == 8 }
    }
}

/// A stream's socket in tokio's reactor: tells its task when the socket has bytes for a receive
/// or room for a send, which a deferred ring completes only once entered.
pub(super) struct SocketWatch(AsyncFd<RawFd>);

impl SocketWatch {
    /// Watches `socket`, which must outlive this; before the first operation on it is queued
    /// (see the module's notes).
    pub(super) fn new(socket: &TcpStream) -> io::Result<SocketWatch> {
        // SAFETY: the stream drops this registration before it lets its socket close.
        let fd =
            unsafe { AsyncFd::register_with_interest(socket.as_raw_fd(), Interest::READABLE | Interest::WRITABLE) }?;
        Ok(SocketWatch(fd))
    }

    /// Whether the socket had news of `interest` since last asked (taken now); if not, the task
    /// is woken when it has. A reactor that is gone has no news.
    pub(super) fn news(&self, cx: &mut Context<'_>, interest: Interest) -> bool {
        let ready = if interest.is_writable() { self.0.poll_write_ready(cx) } else { self.0.poll_read_ready(cx) };
        match ready {
            Poll::Ready(Ok(mut guard)) => {
                guard.clear_ready();
                true
            }
            Poll::Ready(Err(_)) | Poll::Pending => false,
        }
    }
}
