//! Phases of captures made by hand: a lookup, then connections over plain HTTP and TLS 1.3 and 1.2,
//! each packet at a time of the test's choosing (an RTT of 40 ms).

use super::packet::build::{dns, server_hello, tcp, udp};
use super::packet::{ACK, FIN, SYN};
use super::*;
use crate::pcap::Packet;

const CLIENT: &str = "198.18.0.1";
const SERVER: &str = "198.18.0.2";

fn at(ms: f64, bytes: Vec<u8>) -> Packet {
    let len = bytes.len() as u32;
    Packet { at: Duration::from_secs(1_700_000_000) + Duration::from_secs_f64(ms / 1e3), len, bytes }
}

/// The phases of `packets` read from memory, checked against those read from a file the crate's
/// writer made of them (streamed back record by record), and the same file cut inside its last
/// record against the packets before it.
fn phases_of(packets: &[Packet], rtt: Option<Duration>) -> Phases {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("callbench-phases-{}-{}.pcap", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let path = std::env::temp_dir().join(name);
    let mut writer = pcap::Writer::create(&path, 65535, pcap::DEFAULT_CAP).unwrap();
    for p in packets {
        writer.packet(std::time::UNIX_EPOCH + p.at, &p.bytes).unwrap();
    }
    let written = writer.finish().unwrap();
    let in_memory = read(packets.to_vec(), rtt);
    let from_file = read_file(&path, rtt);
    let last = packets.last().unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(written.bytes - 1).unwrap();
    let cut = read_file(&path, rtt);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(from_file, Ok(in_memory.clone()), "the same phases from the file");
    let last_record = written.bytes - pcap::RECORD_HEADER - last.bytes.len() as u64;
    let before = read(packets[..packets.len() - 1].to_vec(), rtt);
    assert_eq!(cut, Ok(Phases { cut_at_byte: Some(last_record), ..before }), "a file cut inside its last record");
    in_memory
}

fn addr(host: &str, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(host.parse().unwrap(), port)
}

/// A connection from client port `port` to the server's 443, opened at `t0` ms over a 40 ms RTT.
fn handshake(port: u16, t0: f64) -> Vec<Packet> {
    let (c, s) = (addr(CLIENT, port), addr(SERVER, 443));
    vec![at(t0, tcp(c, s, SYN, b"")), at(t0 + 40.0, tcp(s, c, SYN | ACK, b"")), at(t0 + 40.1, tcp(c, s, ACK, b""))]
}

#[test]
fn a_plain_connection_is_a_connect_then_its_exchanges() {
    let (c, s) = (addr(CLIENT, 40000), addr(SERVER, 443));
    let mut p = handshake(40000, 0.0);
    p.push(at(40.2, tcp(c, s, ACK, b"GET /a HTTP/1.1\r\n\r\n")));
    p.push(at(81.0, tcp(s, c, ACK, b"HTTP/1.1 200 OK\r\n")));
    p.push(at(81.5, tcp(s, c, ACK, &[b'x'; 100])));
    p.push(at(81.6, tcp(c, s, ACK, b""))); // an ACK: no flight of its own
    p.push(at(100.0, tcp(c, s, ACK, b"GET /b HTTP/1.1\r\n\r\n")));
    p.push(at(141.0, tcp(s, c, ACK, b"HTTP/1.1 200 OK\r\n")));
    p.push(at(150.0, tcp(c, s, FIN | ACK, b"")));
    let phases = phases_of(&p, None);
    let conn = &phases.connections[0];
    assert_eq!((phases.rtt_us, conn.tcp_connect_us, conn.tls.as_ref()), (Some(40_000.0), Some(40_000.0), None));
    let e = &conn.exchanges;
    assert_eq!(e.len(), 2);
    assert!(
        (e[0].first_byte_us.unwrap() - 40_800.0).abs() < 1e-6 && (e[0].last_byte_us.unwrap() - 41_300.0).abs() < 1e-6
    );
    assert_eq!((e[0].request_bytes, e[0].answer_bytes), (19, 117));
    assert!((e[1].request_at_us - 100_000.0).abs() < 1e-6 && (e[1].first_byte_us.unwrap() - 41_000.0).abs() < 1e-6);
    assert_eq!(conn.ended_by, Some("client"));
}

#[test]
fn tls_13_is_one_round_trip_and_its_request_follows_at_once() {
    let (c, s) = (addr(CLIENT, 40001), addr(SERVER, 443));
    let mut p = handshake(40001, 0.0);
    p.push(at(40.2, tcp(c, s, ACK, &[22, 3, 1, 0, 200, 1, 3, 3])));
    let mut flight = server_hello(true);
    flight.extend_from_slice(&[20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 40]);
    p.push(at(80.5, tcp(s, c, ACK, &flight)));
    p.push(at(80.8, tcp(c, s, ACK, &[20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 53]))); // CCS, then Finished + request
    p.push(at(121.0, tcp(s, c, ACK, &[23, 3, 3, 1, 0])));
    let conn = &phases_of(&p, None).connections[0];
    let tls = conn.tls.as_ref().unwrap();
    assert_eq!(tls.version, Some("1.3"));
    assert!((tls.handshake_us.unwrap() - 40_600.0).abs() < 1e-6, "{tls:?}");
    assert_eq!(conn.exchanges.len(), 1);
    assert!((conn.exchanges[0].first_byte_us.unwrap() - 40_200.0).abs() < 1e-6);
}

#[test]
fn tls_12_is_two_round_trips_before_the_request() {
    let (c, s) = (addr(CLIENT, 40002), addr(SERVER, 443));
    let mut p = handshake(40002, 0.0);
    p.push(at(40.2, tcp(c, s, ACK, &[22, 3, 1, 0, 200, 1])));
    p.push(at(80.5, tcp(s, c, ACK, &server_hello(false))));
    p.push(at(80.7, tcp(c, s, ACK, &[22, 3, 3, 0, 70, 16]))); // ClientKeyExchange, CCS, Finished
    p.push(at(121.0, tcp(s, c, ACK, &[20, 3, 3, 0, 1, 1])));
    p.push(at(121.2, tcp(c, s, ACK, &[23, 3, 3, 0, 80])));
    p.push(at(162.0, tcp(s, c, ACK, &[23, 3, 3, 2, 0])));
    let conn = &phases_of(&p, None).connections[0];
    let tls = conn.tls.as_ref().unwrap();
    assert_eq!(tls.version, Some("1.2"));
    assert!((tls.handshake_us.unwrap() - 81_000.0).abs() < 1e-6, "{tls:?}");
    assert!((conn.exchanges[0].first_byte_us.unwrap() - 40_800.0).abs() < 1e-6);
}

#[test]
fn a_lookup_belongs_to_the_connection_that_follows_it() {
    let (resolver, client_dns) = (addr(SERVER, 53), addr(CLIENT, 5353));
    let mut p = vec![
        at(0.0, udp(client_dns, resolver, &dns(9, false, "api.example"))),
        at(40.3, udp(resolver, client_dns, &dns(9, true, "api.example"))),
    ];
    p.extend(handshake(40003, 41.0));
    p.extend(handshake(40004, 200.0)); // a second connection, no lookup of its own
    let phases = phases_of(&p, Some(Duration::from_millis(40)));
    assert_eq!(phases.lookups.len(), 1);
    assert_eq!(phases.lookups[0].name.as_deref(), Some("api.example"));
    assert!((phases.connections[0].dns_us.unwrap() - 40_300.0).abs() < 1e-6);
    assert_eq!(phases.connections[1].dns_us, None);
    assert_eq!((phases.rtt_us, phases.rtt_measured), (Some(40_000.0), false));
}

#[test]
fn a_syn_sent_again_times_the_connect_from_the_first() {
    let (c, s) = (addr(CLIENT, 40005), addr(SERVER, 443));
    let p = vec![at(0.0, tcp(c, s, SYN, b"")), at(1000.0, tcp(c, s, SYN, b"")), at(1040.0, tcp(s, c, SYN | ACK, b""))];
    let phases = phases_of(&p, None);
    assert_eq!(phases.connections.len(), 1);
    assert_eq!(phases.connections[0].tcp_connect_us, Some(1_040_000.0));
}

#[test]
fn packets_are_read_in_time_order_whatever_order_the_file_has() {
    let (c, s) = (addr(CLIENT, 40006), addr(SERVER, 443));
    let mut p = handshake(40006, 0.0);
    p.push(at(81.0, tcp(s, c, ACK, b"HTTP/1.1 200 OK\r\n")));
    p.push(at(40.2, tcp(c, s, ACK, b"GET / HTTP/1.1\r\n\r\n"))); // written after the answer, sent before it
    let e = &phases_of(&p, None).connections[0].exchanges;
    assert_eq!(e.len(), 1);
    assert!((e[0].first_byte_us.unwrap() - 40_800.0).abs() < 1e-6, "{e:?}");
}

#[test]
fn server_bytes_too_soon_to_answer_a_flight_belong_to_the_one_before() {
    // TLS 1.2 with HTTP/2: the server's SETTINGS leave right behind its Finished and reach the client
    // 10 µs after its request went out; its SETTINGS ACK follows. One exchange, answered a round trip later.
    let (c, s) = (addr(CLIENT, 40007), addr(SERVER, 443));
    let mut p = handshake(40007, 0.0);
    p.push(at(40.2, tcp(c, s, ACK, &[22, 3, 1, 0, 200, 1])));
    p.push(at(80.5, tcp(s, c, ACK, &server_hello(false))));
    p.push(at(80.7, tcp(c, s, ACK, &[22, 3, 3, 0, 70, 16])));
    p.push(at(121.0, tcp(s, c, ACK, &[20, 3, 3, 0, 1, 1])));
    p.push(at(121.01, tcp(c, s, ACK, &[23, 3, 3, 0, 80]))); // preface, SETTINGS, HEADERS
    p.push(at(121.02, tcp(s, c, ACK, &[23, 3, 3, 0, 39]))); // the server's SETTINGS
    p.push(at(121.04, tcp(c, s, ACK, &[23, 3, 3, 0, 33]))); // SETTINGS ACK
    p.push(at(162.0, tcp(s, c, ACK, &[23, 3, 3, 3, 0])));
    let conn = &phases_of(&p, None).connections[0];
    assert_eq!(conn.exchanges.len(), 1, "{conn:?}");
    let e = &conn.exchanges[0];
    assert!((e.first_byte_us.unwrap() - 40_990.0).abs() < 1e-6, "{e:?}");
    assert_eq!((e.request_bytes, e.answer_bytes), (10, 5), "the request and the SETTINGS ACK, then the answer");
}
