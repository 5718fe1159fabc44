//! Connections as both clients use them: non-blocking, Nagle off.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub fn connect_all(addr: SocketAddr, n: usize) -> Result<Vec<TcpStream>, String> {
    (0..n)
        .map(|_| {
            let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
            s.set_nodelay(true).map_err(|e| e.to_string())?;
            s.set_nonblocking(true).map_err(|e| e.to_string())?;
            Ok(s)
        })
        .collect()
}

/// This process's user + system CPU time so far, in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Waits up to 100 ms for ready connections: how many of `events` were filled (0 when a signal
/// interrupted the wait).
pub fn wait(epfd: i32, events: &mut [libc::epoll_event]) -> Result<usize, String> {
    // SAFETY: `events` has room for its length.
    let n = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), events.len() as i32, 100) };
    if n >= 0 {
        return Ok(n as usize);
    }
    match std::io::Error::last_os_error() {
        e if e.kind() == std::io::ErrorKind::Interrupted => Ok(0),
        e => Err(format!("epoll_wait: {e}")),
    }
}
