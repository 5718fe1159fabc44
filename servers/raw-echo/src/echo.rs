//! One worker's loop: epoll over the shared listener and the connections it accepted, every byte
//! read written straight back. No framing, so a call's cost here is the kernel's: one epoll_wait
//! shared by the connections ready together, one read, one write.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

const LISTENER: u64 = u64::MAX;

pub fn serve(listener: &TcpListener) -> Result<(), String> {
    // SAFETY: epoll_create1 has no preconditions.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        return Err(format!("epoll_create1: {}", std::io::Error::last_os_error()));
    }
    // Exclusive: a new connection wakes one worker, not all of them.
    add(epfd, listener.as_raw_fd(), LISTENER, libc::EPOLLIN as u32 | libc::EPOLLEXCLUSIVE as u32)?;
    let mut conns: HashMap<u64, TcpStream> = HashMap::new();
    let mut next_id = 0u64;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    let mut buf = vec![0u8; 65536];
    loop {
        // SAFETY: `events` has room for its length.
        let n = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), events.len() as i32, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("epoll_wait: {}", std::io::Error::last_os_error()));
        }
        for ev in &events[..n as usize] {
            let id = ev.u64;
            if id == LISTENER {
                while let Ok((s, _)) = listener.accept() {
                    let _ = s.set_nodelay(true);
                    let _ = s.set_nonblocking(true);
                    add(epfd, s.as_raw_fd(), next_id, libc::EPOLLIN as u32)?;
                    conns.insert(next_id, s);
                    next_id += 1;
                }
                continue;
            }
            let Some(s) = conns.get_mut(&id) else { continue };
            if !echo(s, &mut buf) {
                conns.remove(&id); // closing the socket removes it from the epoll set
            }
        }
    }
}

/// Echoes what is there; false when the connection is over.
fn echo(s: &mut TcpStream, buf: &mut [u8]) -> bool {
    loop {
        match s.read(buf) {
            Ok(0) => return false,
            Ok(n) => {
                // A client that sends more than it reads fills our send buffer: write_all waits
                // for room (at most 10 s), stalling this worker only.
                if write_all(s, &buf[..n]).is_err() {
                    return false;
                }
                if n < buf.len() {
                    return true;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// `write_all` on a non-blocking socket: waits (poll) while the peer's window is full.
fn write_all(s: &mut TcpStream, mut data: &[u8]) -> std::io::Result<()> {
    while !data.is_empty() {
        match s.write(data) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let mut pfd = libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
                // SAFETY: one valid pollfd. A peer that reads nothing for 10 s is given up.
                if unsafe { libc::poll(&mut pfd, 1, 10_000) } <= 0 {
                    return Err(ErrorKind::TimedOut.into());
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn add(epfd: i32, fd: i32, id: u64, events: u32) -> Result<(), String> {
    let mut ev = libc::epoll_event { events, u64: id };
    // SAFETY: valid epoll and socket descriptors, a valid event.
    if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
        return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}
