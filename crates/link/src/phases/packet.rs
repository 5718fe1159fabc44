//! What one captured IPv4 packet says, as far as the phases need: TCP's ports, flags and payload
//! size (from the IP header's length, not the captured bytes, which the snap length may cut), the
//! payload's first bytes, and a DNS message's id, direction and name.

use std::net::{Ipv4Addr, SocketAddrV4};

pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const FIN: u8 = 0x01;
pub const RST: u8 = 0x04;

/// A TCP segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment<'a> {
    pub from: SocketAddrV4,
    pub to: SocketAddrV4,
    pub flags: u8,
    /// Payload bytes on the wire.
    pub len: usize,
    /// The payload bytes the capture kept (the first `len` at most).
    pub payload: &'a [u8],
}

/// A DNS message over UDP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dns {
    pub from: SocketAddrV4,
    pub to: SocketAddrV4,
    pub id: u16,
    pub response: bool,
    /// The first question's name (dotted), when the capture kept it.
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    Tcp(Segment<'a>),
    Dns(Dns),
    /// Anything else (IPv6, ICMP, UDP that is not DNS, a fragment): not part of any phase.
    Other,
}

/// Reads an IPv4 packet (captured bytes, maybe cut short).
pub fn parse(bytes: &[u8]) -> Parsed<'_> {
    if bytes.len() < 20 || bytes[0] >> 4 != 4 {
        return Parsed::Other;
    }
    let ihl = usize::from(bytes[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    let fragment = u16::from_be_bytes([bytes[6], bytes[7]]) & 0x1fff;
    if ihl < 20 || bytes.len() < ihl || fragment != 0 {
        return Parsed::Other;
    }
    let src = Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]);
    let dst = Ipv4Addr::new(bytes[16], bytes[17], bytes[18], bytes[19]);
    let body = &bytes[ihl..];
    let port = |at: usize| u16::from_be_bytes([body[at], body[at + 1]]);
    match bytes[9] {
        6 if body.len() >= 20 => {
            let offset = usize::from(body[12] >> 4) * 4;
            let len = total.saturating_sub(ihl + offset);
            let payload = body.get(offset..).unwrap_or(&[]);
            Parsed::Tcp(Segment {
                from: SocketAddrV4::new(src, port(0)),
                to: SocketAddrV4::new(dst, port(2)),
                flags: body[13],
                len,
                payload: &payload[..payload.len().min(len)],
            })
        }
        17 if body.len() >= 8 + 12 && (port(0) == 53 || port(2) == 53) => {
            let dns = &body[8..];
            Parsed::Dns(Dns {
                from: SocketAddrV4::new(src, port(0)),
                to: SocketAddrV4::new(dst, port(2)),
                id: u16::from_be_bytes([dns[0], dns[1]]),
                response: dns[2] & 0x80 != 0,
                name: question_name(dns),
            })
        }
        _ => Parsed::Other,
    }
}

/// The first question's name of a DNS message, without compression (questions never use it).
fn question_name(dns: &[u8]) -> Option<String> {
    if u16::from_be_bytes([dns[4], dns[5]]) == 0 {
        return None;
    }
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let n = usize::from(*dns.get(at)?);
        if n == 0 {
            break;
        }
        if n > 63 {
            return None;
        }
        labels.push(String::from_utf8_lossy(dns.get(at + 1..at + 1 + n)?).into_owned());
        at += 1 + n;
    }
    Some(labels.join("."))
}

/// The TLS version a ServerHello at the start of `payload` chose: "1.3" when it names 1.3 in its
/// supported_versions extension, else its legacy version ("1.2", "1.1", "1.0"); None when the
/// payload does not start with a ServerHello or the capture cut it before the answer.
pub fn server_hello_version(payload: &[u8]) -> Option<&'static str> {
    // A handshake record (22), then a ServerHello (2).
    if payload.len() < 5 + 4 + 2 + 32 + 1 || payload[0] != 22 || payload[5] != 2 {
        return None;
    }
    let legacy = match (payload[9], payload[10]) {
        (3, 3) => "1.2",
        (3, 2) => "1.1",
        (3, 1) => "1.0",
        _ => return None,
    };
    let mut at = 5 + 4 + 2 + 32;
    at += 1 + usize::from(*payload.get(at)?); // session id
    at += 2 + 1; // cipher suite, compression method
    let Some(&[hi, lo]) = payload.get(at..at + 2) else { return Some(legacy) };
    let end = (at + 2 + usize::from(u16::from_be_bytes([hi, lo]))).min(payload.len());
    at += 2;
    while at + 4 <= end {
        let kind = u16::from_be_bytes([payload[at], payload[at + 1]]);
        let size = usize::from(u16::from_be_bytes([payload[at + 2], payload[at + 3]]));
        if kind == 0x002b && size == 2 && payload.get(at + 4..at + 6) == Some(&[3, 4]) {
            return Some("1.3");
        }
        at += 4 + size;
    }
    Some(legacy)
}

/// Whether a payload starts with a TLS ClientHello (a handshake record whose message is type 1).
pub fn is_client_hello(payload: &[u8]) -> bool {
    payload.len() >= 6 && payload[0] == 22 && payload[1] == 3 && payload[5] == 1
}

#[cfg(test)]
pub(crate) mod build {
    //! Packets made by hand for the tests: IPv4 with TCP or UDP, checksums left at zero.
    use std::net::SocketAddrV4;

    pub fn tcp(from: SocketAddrV4, to: SocketAddrV4, flags: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = ip(from, to, 6, 20 + payload.len());
        p.extend_from_slice(&from.port().to_be_bytes());
        p.extend_from_slice(&to.port().to_be_bytes());
        p.extend_from_slice(&[0; 8]); // seq, ack
        p.extend_from_slice(&[5 << 4, flags, 0xff, 0xff, 0, 0, 0, 0]);
        p.extend_from_slice(payload);
        p
    }

    pub fn udp(from: SocketAddrV4, to: SocketAddrV4, payload: &[u8]) -> Vec<u8> {
        let mut p = ip(from, to, 17, 8 + payload.len());
        p.extend_from_slice(&from.port().to_be_bytes());
        p.extend_from_slice(&to.port().to_be_bytes());
        p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(payload);
        p
    }

    fn ip(from: SocketAddrV4, to: SocketAddrV4, protocol: u8, rest: usize) -> Vec<u8> {
        let mut p = vec![0x45, 0];
        p.extend_from_slice(&((20 + rest) as u16).to_be_bytes());
        p.extend_from_slice(&[0, 0, 0x40, 0, 64, protocol, 0, 0]);
        p.extend_from_slice(&from.ip().octets());
        p.extend_from_slice(&to.ip().octets());
        p
    }

    /// A DNS query (or response) for `name`.
    pub fn dns(id: u16, response: bool, name: &str) -> Vec<u8> {
        let mut m = id.to_be_bytes().to_vec();
        m.extend_from_slice(&[if response { 0x81 } else { 0x01 }, 0, 0, 1, 0, u8::from(response), 0, 0, 0, 0]);
        for label in name.split('.') {
            m.push(label.len() as u8);
            m.extend_from_slice(label.as_bytes());
        }
        m.extend_from_slice(&[0, 0, 1, 0, 1]);
        m
    }

    /// The start of a TLS ServerHello choosing `version` (1.3 through supported_versions).
    pub fn server_hello(tls13: bool) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.extend_from_slice(&[0, 0x13, 0x01, 0]); // no session id, TLS_AES_128_GCM_SHA256, no compression
        let extensions: Vec<u8> = if tls13 { vec![0, 0x2b, 0, 2, 3, 4] } else { vec![0xff, 1, 0, 1, 0] };
        body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
        body.extend_from_slice(&extensions);
        let mut hs = vec![2, 0, 0, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut record = vec![22, 3, 3];
        record.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        record.extend_from_slice(&hs);
        record
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;

    fn addr(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn tcp_segments_give_their_flags_and_wire_length_even_cut_short() {
        let p = tcp(addr("198.18.0.1:40000"), addr("198.18.0.2:8080"), ACK, b"GET / HTTP/1.1\r\n");
        let Parsed::Tcp(s) = parse(&p[..44]) else { panic!("not TCP") };
        assert_eq!((s.from.port(), s.to.port(), s.flags, s.len), (40000, 8080, ACK, 16));
        assert_eq!(s.payload, b"GET ");
    }

    #[test]
    fn dns_messages_give_their_id_direction_and_name() {
        let q = udp(addr("198.18.0.1:5353"), addr("198.18.0.2:53"), &dns(7, false, "api.example"));
        assert_eq!(
            parse(&q),
            Parsed::Dns(Dns {
                from: addr("198.18.0.1:5353"),
                to: addr("198.18.0.2:53"),
                id: 7,
                response: false,
                name: Some("api.example".into())
            })
        );
        assert_eq!(parse(&udp(addr("198.18.0.1:1"), addr("198.18.0.2:2"), &[0; 20])), Parsed::Other);
        assert_eq!(parse(&[0x60; 40]), Parsed::Other, "IPv6 is no phase of ours");
    }

    #[test]
    fn a_server_hello_names_its_version() {
        assert_eq!(server_hello_version(&server_hello(true)), Some("1.3"));
        assert_eq!(server_hello_version(&server_hello(false)), Some("1.2"));
        assert_eq!(server_hello_version(b"HTTP/1.1 200 OK\r\n"), None);
        assert!(is_client_hello(&[22, 3, 1, 0, 200, 1]) && !is_client_hello(&[23, 3, 3, 0, 5, 1]));
    }
}
