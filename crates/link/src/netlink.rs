//! The few rtnetlink requests the links make — a veth pair with its peer in another namespace, a
//! bridge, an address, an interface up (or joined to a bridge), the route to an address — sent on
//! a blocking socket of the calling thread's namespace (a socket belongs to the namespace of the
//! thread that opens it). Written out here rather than taken from the rtnetlink crates, which
//! model every rtnetlink message and were compiled, on every first build, for these five requests.

use crate::LinkError;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

// The kernel's numbers (include/uapi/linux/{netlink,rtnetlink,if_link,if_addr,veth}.h): stable ABI.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const RTM_NEWLINK: u16 = 16;
const RTM_NEWADDR: u16 = 20;
const RTM_NEWROUTE: u16 = 24;
const RTM_GETROUTE: u16 = 26;
const IFLA_IFNAME: u16 = 3;
const IFLA_MASTER: u16 = 10;
const IFLA_LINKINFO: u16 = 18;
const IFLA_NET_NS_FD: u16 = 28;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const VETH_INFO_PEER: u16 = 1;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_BROADCAST: u16 = 4;
const RTA_DST: u16 = 1;
const RTA_OIF: u16 = 4;
const IFF_UP: u32 = 0x1;
const AF_INET: u8 = libc::AF_INET as u8;
/// struct nlmsghdr, struct ifinfomsg: 16 bytes each.
const HEADER: usize = 16;
/// No answer within this is an error, not a wait for ever.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// A NETLINK_ROUTE socket of the calling thread's network namespace.
pub struct Netlink {
    socket: OwnedFd,
    sequence: u32,
}

impl Netlink {
    pub fn open() -> Result<Netlink, LinkError> {
        let fail = |what: &str| {
            let e = io::Error::last_os_error();
            LinkError::os(&e, format!("cannot open netlink ({what}): {e}"))
        };
        // SAFETY: socket(2) with constant arguments; the descriptor is owned from here on.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
        if fd < 0 {
            return Err(fail("socket"));
        }
        // SAFETY: fd is a descriptor this function just opened and nothing else owns.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        let timeout = libc::timeval { tv_sec: ANSWER_WITHIN.as_secs() as libc::time_t, tv_usec: 0 };
        // SAFETY: setsockopt reads a timeval of the size given.
        let set = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if set != 0 {
            return Err(fail("a receive timeout"));
        }
        // SAFETY: an all-zero sockaddr_nl is valid; bind reads the size given.
        let mut local: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        local.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let bound = unsafe {
            libc::bind(
                fd,
                (&local as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if bound != 0 {
            return Err(fail("bind"));
        }
        Ok(Netlink { socket, sequence: 0 })
    }

    /// The index of interface `name` in this namespace.
    pub fn index_of(&self, name: &str) -> Result<u32, LinkError> {
        let c = std::ffi::CString::new(name).map_err(|_| LinkError::Invalid(format!("interface name {name:?}")))?;
        // if_nametoindex asks through a socket it opens: in the calling thread's namespace, as this one.
        // SAFETY: c is a NUL-terminated string that outlives the call.
        match unsafe { libc::if_nametoindex(c.as_ptr()) } {
            0 => Err(LinkError::Kernel(format!("no interface {name}"))),
            index => Ok(index),
        }
    }

    /// Interface `index` up.
    pub fn set_up(&mut self, index: u32) -> Result<(), LinkError> {
        let message = Message::new(RTM_NEWLINK, NLM_F_ACK).link(index, IFF_UP, IFF_UP);
        self.acknowledged(message).map_err(|e| errno(e, format!("cannot bring interface {index} up")))
    }

    /// Interface `index` joined to the bridge `master`, and up.
    pub fn set_master_and_up(&mut self, index: u32, master: u32) -> Result<(), LinkError> {
        let mut message = Message::new(RTM_NEWLINK, NLM_F_ACK).link(index, IFF_UP, IFF_UP);
        message.attribute(IFLA_MASTER, &master.to_ne_bytes());
        self.acknowledged(message).map_err(|e| errno(e, format!("cannot join interface {index} to bridge {master}")))
    }

    /// `addr/prefix` on interface `index` (local and peer address, and the broadcast as `ip addr
    /// add … brd +` gives it).
    pub fn add_address(&mut self, index: u32, addr: Ipv4Addr, prefix: u8) -> Result<(), LinkError> {
        let mut message = Message::new(RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
        message.bytes(&[AF_INET, prefix, 0, 0]);
        message.bytes(&index.to_ne_bytes());
        message.attribute(IFA_LOCAL, &addr.octets());
        message.attribute(IFA_ADDRESS, &addr.octets());
        if prefix < 31 {
            let host_bits = u32::MAX.checked_shr(u32::from(prefix)).unwrap_or(0);
            message.attribute(IFA_BROADCAST, &Ipv4Addr::from(u32::from(addr) | host_bits).octets());
        }
        self.acknowledged(message)
            .map_err(|e| errno(e, format!("cannot give interface {index} the address {addr}/{prefix}")))
    }

    /// A veth pair: `name` here, its peer `peer_name` made directly in the namespace of `peer_ns`
    /// (as `ip link add NAME type veth peer name PEER netns NS`).
    pub fn add_veth_pair(&mut self, name: &str, peer_name: &str, peer_ns: RawFd) -> Result<(), LinkError> {
        self.acknowledged(veth_request(name, peer_name, peer_ns))
            .map_err(|e| errno(e, "cannot make a veth pair".into()))
    }

    /// A bridge named `name`.
    pub fn add_bridge(&mut self, name: &str) -> Result<(), LinkError> {
        let mut message = Message::new(RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL).link(0, 0, 0);
        message.attribute(IFLA_IFNAME, &c_string(name));
        let info = message.nest(IFLA_LINKINFO);
        message.attribute(IFLA_INFO_KIND, b"bridge");
        message.end(info);
        self.acknowledged(message).map_err(|e| errno(e, "cannot make a bridge".into()))
    }

    /// The interface the kernel's route to `ip` leaves through (None: the route names none).
    pub fn route_interface(&mut self, ip: Ipv4Addr) -> Result<Option<u32>, io::Error> {
        let mut message = Message::new(RTM_GETROUTE, 0);
        // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type; flags.
        message.bytes(&[AF_INET, 32, 0, 0, 0, 0, 0, 0]);
        message.bytes(&0u32.to_ne_bytes());
        message.attribute(RTA_DST, &ip.octets());
        let sequence = self.send(message)?;
        let answer = self.answer(sequence)?;
        match answer {
            Answer::Message(kind, body) if kind == RTM_NEWROUTE => Ok(attributes(body.get(12..).unwrap_or_default())
                .find(|(kind, _)| *kind == RTA_OIF)
                .and_then(|(_, value)| Some(u32::from_ne_bytes(value.get(..4)?.try_into().ok()?)))),
            Answer::Message(kind, _) => Err(io::Error::other(format!("netlink answered message type {kind}"))),
            Answer::Ack => Err(io::Error::other("netlink answered no route")),
        }
    }

    /// Sends `message` and waits for its acknowledgement: the kernel's errno if it refused.
    fn acknowledged(&mut self, message: Message) -> Result<(), io::Error> {
        let sequence = self.send(message)?;
        match self.answer(sequence)? {
            Answer::Ack => Ok(()),
            Answer::Message(kind, _) => Err(io::Error::other(format!("netlink answered message type {kind}"))),
        }
    }

    fn send(&mut self, message: Message) -> Result<u32, io::Error> {
        self.sequence = self.sequence.wrapping_add(1);
        let bytes = message.finish(self.sequence);
        // SAFETY: an all-zero sockaddr_nl addresses the kernel; sendto reads the buffer and the address.
        let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let sent = unsafe {
            libc::sendto(
                self.socket.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                0,
                (&kernel as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(self.sequence)
    }

    /// The kernel's answer to request `sequence` (answers to earlier ones are passed over).
    fn answer(&mut self, sequence: u32) -> Result<Answer, io::Error> {
        let mut buffer = vec![0u8; 32 * 1024];
        // Bounded: each datagram is read once, and a silent kernel ends the wait by the timeout.
        for _ in 0..64 {
            // SAFETY: recv writes at most buffer.len() bytes into buffer.
            let read = unsafe { libc::recv(self.socket.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len(), 0) };
            if read < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "netlink did not answer"));
                }
                return Err(e);
            }
            for (kind, seq, body) in messages(&buffer[..read as usize]) {
                if seq != sequence {
                    continue;
                }
                return match kind {
                    NLMSG_ERROR => match body.get(..4).map(|b| i32::from_ne_bytes(b.try_into().unwrap_or_default())) {
                        Some(0) => Ok(Answer::Ack),
                        Some(code) => Err(io::Error::from_raw_os_error(-code)),
                        None => Err(io::Error::other("netlink answered a short error")),
                    },
                    NLMSG_DONE => Ok(Answer::Ack),
                    other => Ok(Answer::Message(other, body.to_vec())),
                };
            }
        }
        Err(io::Error::other("netlink sent no answer to the request"))
    }
}

enum Answer {
    /// An acknowledgement (or the end of a dump).
    Ack,
    /// A message of the given type, its body after the netlink header.
    Message(u16, Vec<u8>),
}

/// A request being written: the netlink header first (its length and sequence filled in at the
/// end), then the body, each attribute padded to 4 bytes.
struct Message {
    bytes: Vec<u8>,
}

impl Message {
    fn new(kind: u16, flags: u16) -> Message {
        let mut bytes = vec![0u8; HEADER];
        bytes[4..6].copy_from_slice(&kind.to_ne_bytes());
        bytes[6..8].copy_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
        Message { bytes }
    }

    /// struct ifinfomsg: any family, interface `index` (0: a new one), `flags` of `change`.
    fn link(mut self, index: u32, flags: u32, change: u32) -> Message {
        self.bytes(&[0, 0, 0, 0]);
        self.bytes(&index.to_ne_bytes());
        self.bytes(&flags.to_ne_bytes());
        self.bytes(&change.to_ne_bytes());
        self
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn attribute(&mut self, kind: u16, value: &[u8]) {
        self.bytes(&((4 + value.len()) as u16).to_ne_bytes());
        self.bytes(&kind.to_ne_bytes());
        self.bytes(value);
        self.pad();
    }

    /// Opens a nested attribute; [`Message::end`] gives it its length.
    fn nest(&mut self, kind: u16) -> usize {
        let at = self.bytes.len();
        self.bytes(&[0, 0]);
        self.bytes(&kind.to_ne_bytes());
        at
    }

    fn end(&mut self, at: usize) {
        let length = (self.bytes.len() - at) as u16;
        self.bytes[at..at + 2].copy_from_slice(&length.to_ne_bytes());
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    fn finish(mut self, sequence: u32) -> Vec<u8> {
        let length = self.bytes.len() as u32;
        self.bytes[0..4].copy_from_slice(&length.to_ne_bytes());
        self.bytes[8..12].copy_from_slice(&sequence.to_ne_bytes());
        self.bytes
    }
}

/// RTM_NEWLINK of a veth pair: `name`, its peer `peer_name` (an ifinfomsg and attributes of its
/// own, nested in the link info's data) in the namespace of `peer_ns`.
fn veth_request(name: &str, peer_name: &str, peer_ns: RawFd) -> Message {
    let mut message = Message::new(RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL).link(0, 0, 0);
    message.attribute(IFLA_IFNAME, &c_string(name));
    let info = message.nest(IFLA_LINKINFO);
    message.attribute(IFLA_INFO_KIND, b"veth");
    let data = message.nest(IFLA_INFO_DATA);
    let peer = message.nest(VETH_INFO_PEER);
    message.bytes(&[0; HEADER]);
    message.attribute(IFLA_IFNAME, &c_string(peer_name));
    message.attribute(IFLA_NET_NS_FD, &(peer_ns as u32).to_ne_bytes());
    message.end(peer);
    message.end(data);
    message.end(info);
    message
}

fn c_string(s: &str) -> Vec<u8> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    bytes
}

/// The netlink messages of a datagram: (type, sequence, body after the header).
fn messages(mut datagram: &[u8]) -> impl Iterator<Item = (u16, u32, &[u8])> {
    std::iter::from_fn(move || {
        let length = u32::from_ne_bytes(datagram.get(0..4)?.try_into().ok()?) as usize;
        if length < HEADER || length > datagram.len() {
            return None;
        }
        let kind = u16::from_ne_bytes(datagram[4..6].try_into().ok()?);
        let sequence = u32::from_ne_bytes(datagram[8..12].try_into().ok()?);
        let body = &datagram[HEADER..length];
        datagram = &datagram[align(length).min(datagram.len())..];
        Some((kind, sequence, body))
    })
}

/// The attributes of a body: (type without its flags, value).
fn attributes(mut body: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let length = u16::from_ne_bytes(body.get(0..2)?.try_into().ok()?) as usize;
        if length < 4 || length > body.len() {
            return None;
        }
        let kind = u16::from_ne_bytes(body[2..4].try_into().ok()?) & 0x3fff;
        let value = &body[4..length];
        body = &body[align(length).min(body.len())..];
        Some((kind, value))
    })
}

fn align(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// The kernel's refusal as the link's error: not permitted (EPERM, EACCES) or the kernel's.
fn errno(e: io::Error, what: String) -> LinkError {
    LinkError::os(&e, format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_veth_request_nests_its_peer_as_the_kernel_reads_it() {
        let bytes = veth_request("cb-link", "cb-port0", 7).finish(9);
        let (kind, sequence, body) = messages(&bytes).next().unwrap();
        assert_eq!((kind, sequence, bytes.len() % 4), (RTM_NEWLINK, 9, 0));
        let flags = u16::from_ne_bytes(bytes[6..8].try_into().unwrap());
        assert_eq!(flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
        let top: Vec<_> = attributes(&body[HEADER..]).collect();
        assert_eq!(top[0], (IFLA_IFNAME, &b"cb-link\0"[..]));
        assert_eq!(top[1].0, IFLA_LINKINFO);
        let info: Vec<_> = attributes(top[1].1).collect();
        assert_eq!(info[0], (IFLA_INFO_KIND, &b"veth"[..]));
        let data: Vec<_> = attributes(info[1].1).collect();
        assert_eq!(data[0].0, VETH_INFO_PEER);
        let peer: Vec<_> = attributes(&data[0].1[HEADER..]).collect();
        assert_eq!(peer[0], (IFLA_IFNAME, &b"cb-port0\0"[..]));
        assert_eq!(peer[1], (IFLA_NET_NS_FD, &7u32.to_ne_bytes()[..]));
        assert_eq!(top.len() + info.len() + data.len() + peer.len(), 2 + 2 + 1 + 2);
    }

    /// Needs no privilege: the route to a loopback address leaves through `lo`.
    #[test]
    fn the_route_to_loopback_leaves_through_lo() {
        let mut nl = Netlink::open().unwrap();
        let lo = nl.index_of("lo").unwrap();
        assert_eq!(nl.route_interface(Ipv4Addr::LOCALHOST).unwrap(), Some(lo));
        assert!(matches!(nl.index_of("cb-no-such-interface"), Err(LinkError::Kernel(_))));
    }

    #[test]
    fn a_refusal_keeps_the_kernels_errno() {
        let refused = errno(io::Error::from_raw_os_error(libc::EPERM), "cannot".into());
        assert!(matches!(refused, LinkError::NotPermitted(_)), "{refused:?}");
        let exists = errno(io::Error::from_raw_os_error(libc::EEXIST), "cannot".into());
        assert!(matches!(exists, LinkError::Kernel(ref m) if m.contains("exists")), "{exists:?}");
    }
}
