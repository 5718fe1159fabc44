//! A name server on the link's server side, so a client's name lookup crosses the link as the seed
//! articles' lookups crossed their networks: dnsmasq (Debian's `dnsmasq-base`, run where it is
//! installed) in the server namespace, answering one name with the server's address and no
//! other; and a resolver file that points a client's resolver at it ([`Resolver`]).

use crate::link::{Link, SERVER_ADDR};
use crate::LinkError;
use std::ffi::CString;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The name the reproductions use: `.test` is reserved for testing (RFC 6761), so it never leaks.
pub const DEFAULT_NAME: &str = "server.callbench.test";

/// How long dnsmasq gets to answer its first question.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// dnsmasq serving `name` → the server's address in the link's server namespace; stopped when dropped.
pub struct NameServer {
    child: Child,
    pub name: String,
    pub resolver: Resolver,
}

impl NameServer {
    /// Starts dnsmasq in `link`'s server namespace and waits until a question from the client side is
    /// answered. `dir` receives the resolver file (`resolv.conf`) clients are pointed at. A name
    /// that is not one is [`LinkError::Invalid`]; dnsmasq missing, exiting or silent, [`LinkError::Service`].
    pub fn start(link: &Link, name: &str, dir: &Path) -> Result<NameServer, LinkError> {
        check_name(name)?;
        let program = locate_dnsmasq().map_err(LinkError::Service)?;
        // The resolver file first: a failure to write it then leaves no name server running.
        let resolver = Resolver::write(dir, SERVER_ADDR)?;
        let netns = link.server.fd();
        let mut command = Command::new(&program);
        command
            .args(["--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--no-poll"])
            .args(["--bind-interfaces", "--port=53", "--user=root", "--group=root"])
            .arg(format!("--pid-file={}", dir.join("dnsmasq.pid").display()))
            .arg(format!("--listen-address={SERVER_ADDR}"))
            .arg(format!("--address=/{name}/{SERVER_ADDR}"))
            // Every other name is answered from here (NXDOMAIN), never forwarded to a server elsewhere.
            .arg("--local=/#/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: setns and prctl are async-signal-safe; nothing allocates between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setns(netns, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child =
            command.spawn().map_err(|e| LinkError::Service(format!("cannot start {}: {e}", program.display())))?;
        let mut server = NameServer { child, name: name.to_string(), resolver };
        server.wait_ready(link).map_err(LinkError::Service)?;
        Ok(server)
    }

    fn wait_ready(&mut self, link: &Link) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        let to = SocketAddrV4::new(SERVER_ADDR, 53);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut why = String::new();
                if let Some(mut err) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = err.read_to_string(&mut why);
                }
                return Err(format!("dnsmasq exited ({status}): {}", why.lines().last().unwrap_or("no message")));
            }
            let asked = link.client.run(|| ask(&self.name, to, Duration::from_millis(500)));
            if let Ok(Some(addr)) = asked {
                return match addr == SERVER_ADDR {
                    true => Ok(()),
                    false => Err(format!("dnsmasq answered {} with {addr}, not {SERVER_ADDR}", self.name)),
                };
            }
            if Instant::now() >= deadline {
                return Err(format!("dnsmasq did not answer {} within {READY_WITHIN:?}", self.name));
            }
        }
    }
}

impl Drop for NameServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn locate_dnsmasq() -> Result<PathBuf, String> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("dnsmasq")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain([PathBuf::from("/usr/sbin/dnsmasq")]).find(|p| p.is_file()).ok_or_else(|| {
        "a name server across the link needs dnsmasq: apt-get install dnsmasq-base (scripts/setup does)".into()
    })
}

/// Err unless `name` is a host name a resolver asks for as it is: letters, digits and hyphens in
/// labels of 1 to 63, at least two labels, 253 characters in all, not an address.
pub fn check_name(name: &str) -> Result<(), LinkError> {
    let bad = |why: &str| Err(LinkError::Invalid(format!("'{name}' is not a host name to serve: {why}")));
    if name.len() > 253 {
        return bad("longer than 253 characters");
    }
    if name.parse::<std::net::IpAddr>().is_ok() {
        return bad("it is an address");
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return bad("a resolver looks a single label up in its search domains, not as it is");
    }
    for label in labels {
        let ok_chars = label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if label.is_empty() || label.len() > 63 || !ok_chars || label.starts_with('-') || label.ends_with('-') {
            return bad("labels are 1 to 63 letters, digits or inner hyphens");
        }
    }
    Ok(())
}

/// A resolver file (`nameserver ADDR`) and what a child needs to see it as /etc/resolv.conf.
#[derive(Debug, Clone)]
pub struct Resolver {
    pub path: PathBuf,
    source: CString,
}

impl Resolver {
    /// Writes `dir/resolv.conf` naming `server` as the only name server.
    pub fn write(dir: &Path, server: Ipv4Addr) -> Result<Resolver, LinkError> {
        let path = dir.join("resolv.conf");
        std::fs::write(&path, format!("nameserver {server}\noptions timeout:2 attempts:2\n"))
            .map_err(|e| LinkError::Io(format!("cannot write {}: {e}", path.display())))?;
        let source = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| LinkError::Invalid("a path with a NUL byte".into()))?;
        Ok(Resolver { path, source })
    }

    /// In a child between fork and exec: a mount namespace of its own in which this file is
    /// /etc/resolv.conf (the rest of the machine keeps its own).
    ///
    /// # Safety
    /// Only async-signal-safe calls: call it from `pre_exec` only.
    pub unsafe fn enter(&self) -> std::io::Result<()> {
        let check = |rc: libc::c_int| if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) };
        check(libc::unshare(libc::CLONE_NEWNS))?;
        // Mounts made in here must not propagate back to the machine's namespace.
        check(libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        check(libc::mount(
            self.source.as_ptr(),
            c"/etc/resolv.conf".as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        ))
    }
}

/// Asks `server` for `name`'s IPv4 address, as a stub resolver does (one question, recursion
/// desired); None when no answer came within `timeout` or it held no address. A socket the kernel
/// will not give is [`LinkError::Kernel`]; a question that cannot be sent, [`LinkError::Service`].
pub fn ask(name: &str, server: SocketAddrV4, timeout: Duration) -> Result<Option<Ipv4Addr>, LinkError> {
    let socket =
        UdpSocket::bind("0.0.0.0:0").map_err(|e| LinkError::Kernel(format!("cannot open a UDP socket: {e}")))?;
    socket.set_read_timeout(Some(timeout)).map_err(|e| LinkError::Kernel(e.to_string()))?;
    let id = (std::process::id() as u16) ^ 0x5a5a;
    socket.send_to(&query(id, name), server).map_err(|e| LinkError::Service(format!("cannot ask {server}: {e}")))?;
    let mut buf = [0u8; 512];
    match socket.recv(&mut buf) {
        Ok(n) => Ok(first_address(&buf[..n], id)),
        Err(_) => Ok(None),
    }
}

/// A DNS question for `name`'s A record.
fn query(id: u16, name: &str) -> Vec<u8> {
    let mut m = id.to_be_bytes().to_vec();
    m.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    m
}

/// The first A record of an answer to question `id`.
fn first_address(m: &[u8], id: u16) -> Option<Ipv4Addr> {
    if m.len() < 12 || u16::from_be_bytes([m[0], m[1]]) != id || m[2] & 0x80 == 0 || m[3] & 0x0f != 0 {
        return None;
    }
    let (questions, answers) = (u16::from_be_bytes([m[4], m[5]]), u16::from_be_bytes([m[6], m[7]]));
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(m, at)? + 4;
    }
    for _ in 0..answers {
        at = skip_name(m, at)?;
        let header = m.get(at..at + 10)?;
        let (kind, len) = (u16::from_be_bytes([header[0], header[1]]), u16::from_be_bytes([header[8], header[9]]));
        let data = m.get(at + 10..at + 10 + len as usize)?;
        if kind == 1 && data.len() == 4 {
            return Some(Ipv4Addr::new(data[0], data[1], data[2], data[3]));
        }
        at += 10 + len as usize;
    }
    None
}

/// The offset after a (possibly compressed) name starting at `at`.
fn skip_name(m: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *m.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return Some(at + 2),
            l => at += 1 + l as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_resolver_asks_for_as_they_are_are_accepted() {
        assert!(check_name(DEFAULT_NAME).is_ok());
        assert!(check_name("a-1.example").is_ok());
        for bad in ["localhost", "198.18.0.2", "::1", "a..b", "-a.b", "a_b.test", &format!("{}.test", "x".repeat(64))] {
            assert!(matches!(check_name(bad), Err(LinkError::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn an_answer_gives_its_first_address_and_only_for_its_question() {
        let mut answer = query(7, "server.callbench.test");
        answer[2] = 0x81;
        answer[3] = 0x80;
        answer[7] = 1; // one answer: a pointer to the question's name, A, IN, TTL, 4 bytes
        answer.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 2]);
        assert_eq!(first_address(&answer, 7), Some(SERVER_ADDR));
        assert_eq!(first_address(&answer, 8), None);
        answer[3] = 0x85; // REFUSED
        assert_eq!(first_address(&answer, 7), None);
        assert_eq!(first_address(&answer[..20], 7), None);
    }
}
