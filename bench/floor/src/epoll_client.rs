//! Ping-pong as an epoll program does it (and as callbench's engine does today through tokio):
//! epoll_wait for the connections with an answer, then per call one read and one write.

use crate::outcome::{Outcome, Plan, Window};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

pub fn run(streams: &[TcpStream], plan: &Plan) -> Result<Outcome, String> {
    // SAFETY: epoll_create1 has no preconditions.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        return Err(format!("epoll_create1: {}", std::io::Error::last_os_error()));
    }
    for (i, s) in streams.iter().enumerate() {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        // SAFETY: valid descriptors and event.
        if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) } < 0 {
            return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
        }
    }
    let message = &plan.request;
    let mut buf = vec![0u8; plan.answer.max(4096)];
    let mut got = vec![0usize; streams.len()];
    let mut window = Window::new(plan);
    let mut sent = vec![Instant::now(); streams.len()];
    for mut s in streams {
        s.write_all(message).map_err(|e| format!("send: {e}"))?;
    }
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; streams.len().min(1024)];
    let mut running = true;
    while running {
        let n = crate::socket::wait(epfd, &mut events)?;
        let now = Instant::now();
        for ev in &events[..n] {
            let i = ev.u64 as usize;
            let mut s = &streams[i];
            match s.read(&mut buf) {
                Ok(0) => return Err("the server closed a connection".into()),
                Ok(k) => got[i] += k,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => continue,
                Err(e) => return Err(format!("receive: {e}")),
            }
            while got[i] >= plan.answer {
                got[i] -= plan.answer;
                running &= window.answered(sent[i], now);
                sent[i] = now;
                s.write_all(message).map_err(|e| format!("send: {e}"))?;
            }
        }
        running &= !window.over(now);
    }
    // SAFETY: closing the descriptor this function made.
    unsafe { libc::close(epfd) };
    Ok(window.finish())
}
