//! The client namespace counts what its sockets did, on a direct path (veth pair) and on an
//! emulated link alike: one connection opened, the bytes sent and received with their IP and TCP
//! headers, and nothing of what happens outside the namespace.

use callbench_link::counters::Counts;
use callbench_link::{Link, LinkSpec, SERVER_ADDR};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const UP: usize = 1000;
const DOWN: usize = 3000;

/// One connection from the client namespace: `UP` bytes out, `DOWN` bytes back, then closed.
fn one_exchange(link: &Link) {
    let listener =
        link.server.run(|| TcpListener::bind((SERVER_ADDR, 0)).map_err(|e| e.to_string())).expect("a listener");
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut got = vec![0u8; UP];
        s.read_exact(&mut got).unwrap();
        s.write_all(&[1u8; DOWN]).unwrap();
    });
    let mut stream = link
        .client
        .run(|| {
            TcpStream::connect_timeout(&(SERVER_ADDR, port).into(), Duration::from_secs(10)).map_err(|e| e.to_string())
        })
        .expect("a connection across");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(&[2u8; UP]).unwrap();
    let mut back = vec![0u8; DOWN];
    stream.read_exact(&mut back).unwrap();
    server.join().unwrap();
}

fn check(link: &Link) {
    let counters = link.client_counters();
    let before = counters.read().unwrap();
    // Traffic outside the namespace (the machine's own loopback) is not its count.
    let outside = TcpListener::bind("127.0.0.1:0").unwrap();
    let _elsewhere = TcpStream::connect(outside.local_addr().unwrap()).unwrap();
    one_exchange(link);
    let c: Counts = counters.read().unwrap().since(&before);
    assert_eq!(c.tcp_active_opens, 1, "{c:?}");
    // Each packet carries at least 40 bytes of IPv4 and TCP header and at most 20 + 60.
    let (payload_out, payload_in) = (c.ip_bytes_out as i64 - UP as i64, c.ip_bytes_in as i64 - DOWN as i64);
    assert!(payload_out >= 40 * c.packets_out as i64 && payload_out <= 80 * c.packets_out as i64, "{c:?}");
    assert!(payload_in >= 40 * c.packets_in as i64 && payload_in <= 80 * c.packets_in as i64, "{c:?}");
    assert!(c.packets_out >= 3 && c.packets_in >= 2, "SYN, data, ACKs out; SYN-ACK and data in: {c:?}");
}

#[test]
fn a_direct_path_counts_one_connection_and_its_bytes() {
    let link = Link::direct().unwrap();
    assert!(!link.is_emulated());
    check(&link);
    assert_eq!(link.stats().up.packets, 0, "no forwarder on a direct path");
}

#[test]
fn an_emulated_link_counts_the_same_way() {
    let link = Link::create(&LinkSpec::transparent(), &[]).unwrap();
    assert!(link.is_emulated());
    check(&link);
}
