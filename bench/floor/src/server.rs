//! The echo: one thread, epoll, every byte read written straight back. No framing, so its cost per
//! call is the kernel's (one epoll_wait shared by the ready connections, one read, one write).

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

const LISTENER: u64 = u64::MAX;

pub fn serve(port: u16) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| format!("cannot listen: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    // SAFETY: epoll_create1 has no preconditions.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        return Err(format!("epoll_create1: {}", std::io::Error::last_os_error()));
    }
    add(epfd, listener.as_raw_fd(), LISTENER)?;
    println!("listening on {}", listener.local_addr().map_err(|e| e.to_string())?);
    std::io::stdout().flush().map_err(|e| e.to_string())?;
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
                    add(epfd, s.as_raw_fd(), next_id)?;
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
                // Answers are small and the client waits for each: a short write would mean the
                // client stopped reading, and then the connection is done.
                if s.write_all(&buf[..n]).is_err() {
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

fn add(epfd: i32, fd: i32, id: u64) -> Result<(), String> {
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: id };
    // SAFETY: valid epoll and socket descriptors, a valid event.
    if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
        return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}
