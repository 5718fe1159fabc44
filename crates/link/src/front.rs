//! A front end on the link's server side: a command of the user's (nginx, say) run in the server
//! namespace between the link and the server, as a platform's TLS-terminating proxy sits in front of
//! its containers. The command is told where to listen and where the server is by its environment:
//!
//! - `CALLBENCH_FRONT_ADDR` (`198.18.0.2:PORT`) and `CALLBENCH_FRONT_PORT`: where it listens, a port
//!   free in the server namespace;
//! - `CALLBENCH_UPSTREAM` (`198.18.0.2:PORT`): the server, which it reaches without crossing the link.
//!
//! The command runs in a process group of its own (`sh -c`), stopped with the whole group when dropped.

use crate::link::{Link, SERVER_ADDR};
use crate::LinkError;
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the front end gets to accept its first connection from the client side.
const READY_WITHIN: Duration = Duration::from_secs(20);

/// A running front end; stopped (its whole process group) when dropped.
pub struct FrontEnd {
    child: Child,
    /// Where it listens: the address clients are given instead of the server's.
    pub addr: SocketAddrV4,
}

impl FrontEnd {
    /// Runs `command` (with `sh -c`) in `link`'s server namespace in front of `upstream`, and waits
    /// until it accepts a TCP connection from the link's client side. An empty command is
    /// [`LinkError::Invalid`]; one that does not start, exits or does not accept, [`LinkError::Service`].
    pub fn start(link: &Link, command: &str, upstream: SocketAddr) -> Result<FrontEnd, LinkError> {
        if command.trim().is_empty() {
            return Err(LinkError::Invalid("the front end's command is empty".into()));
        }
        let port = link.server.run(|| {
            let kernel = |e: std::io::Error| LinkError::Kernel(e.to_string());
            let listener = TcpListener::bind(SocketAddrV4::new(SERVER_ADDR, 0)).map_err(kernel)?;
            Ok(listener.local_addr().map_err(kernel)?.port())
        })?;
        let addr = SocketAddrV4::new(SERVER_ADDR, port);
        let netns = link.server.fd();
        let mut shell = Command::new("sh");
        shell
            .args(["-c", command])
            .env("CALLBENCH_FRONT_ADDR", addr.to_string())
            .env("CALLBENCH_FRONT_PORT", port.to_string())
            .env("CALLBENCH_UPSTREAM", upstream.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0);
        // SAFETY: setns and prctl are async-signal-safe; nothing allocates between fork and exec.
        unsafe {
            shell.pre_exec(move || {
                if libc::setns(netns, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child =
            shell.spawn().map_err(|e| LinkError::Service(format!("cannot start the front end ({command}): {e}")))?;
        let mut front = FrontEnd { child, addr };
        front.wait_ready(link).map_err(LinkError::Service)?;
        Ok(front)
    }

    fn wait_ready(&mut self, link: &Link) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("the front end exited before it accepted a connection ({status})"));
            }
            let to = SocketAddr::V4(self.addr);
            if link
                .client
                .run(|| TcpStream::connect_timeout(&to, Duration::from_secs(1)).map_err(|e| e.to_string()))
                .is_ok()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the front end did not accept a connection at {} within {READY_WITHIN:?}",
                    self.addr
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for FrontEnd {
    fn drop(&mut self) {
        let group = self.child.id() as i32;
        // SAFETY: signals the process group this front end's shell leads, and nothing else.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above; the leader has not been reaped, so the group is still this front end's.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
