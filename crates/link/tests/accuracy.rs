//! The link does what its spec says, measured with real sockets across real namespaces and TUN
//! devices (root needed, as for every link). Each expectation is the configured value plus the
//! link's own cost, measured in the same test at `rtt=0`: these tests check the link's arithmetic
//! against the kernel's TCP, not how fast this machine is.

use callbench_link::probe::ping_pong;
use callbench_link::{Link, LinkSpec, SERVER_ADDR};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One link at a time: each test's forwarder and sockets would otherwise share the two cores with
/// the others', and their wake-ups would be in every figure.
fn alone() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Pins the calling thread, and so the threads it starts afterwards (the echo, the namespace
/// threads), to the first CPU it may use, and returns that CPU for the forwarder. On a virtual
/// machine a CPU that idled for milliseconds is slow to run a thread woken from another one, and
/// across a 10 ms link the ping-pong's three threads each idle that long (what that cost:
/// bench/results/code-notes-2026-12.md#wake-ups-across-cpus-in-the-link-tests). On one CPU the
/// wake-ups are local and what remains is the link's arithmetic (the runner pins the forwarder
/// beside the client too).
fn one_cpu() -> usize {
    // SAFETY: affinity syscalls on the calling thread with a zeroed, properly sized set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0, "sched_getaffinity");
        let cpu = (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set)).expect("some CPU");
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        assert_eq!(libc::sched_setaffinity(0, size, &one), 0, "sched_setaffinity");
        cpu
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn link(spec: &str) -> Link {
    let cpu = one_cpu();
    Link::create(&LinkSpec::parse(spec).unwrap(), &[cpu]).unwrap_or_else(|e| panic!("{e}"))
}

/// Within 3% of `expected`, or 150 µs, whichever is larger (the accuracy bound).
fn close(measured_us: f64, expected_us: f64) -> bool {
    (measured_us - expected_us).abs() <= (0.03 * expected_us).max(150.0)
}

#[test]
fn round_trips_and_connects_take_the_configured_rtt() {
    let _alone = alone();
    let link = link("rtt=0");
    let base = ping_pong(&link, 200).unwrap();
    let base_us = base.median_us();
    assert!(base_us < 2_000.0, "the link alone costs {base_us:.0} µs a round trip");
    // A connect's own cost is measured like a connect: the first packets after the link was idle
    // wait for the forwarder to wake.
    let connects = |link: &Link| -> Vec<f64> { (0..5).map(|_| ping_pong(link, 1).unwrap().connect_us).collect() };
    let base_connect_us = median(connects(&link));
    for (rtt_ms, round_trips) in [(1u64, 100), (10, 40), (40, 15), (100, 7)] {
        link.set_spec(&LinkSpec::parse(&format!("rtt={rtt_ms}ms")).unwrap());
        let p = ping_pong(&link, round_trips).unwrap();
        let expected = rtt_ms as f64 * 1000.0 + base_us;
        let round_trip = p.median_us();
        // Printed so that a failure shows every RTT's figure, not only the first one out of bounds.
        eprintln!("rtt={rtt_ms}ms: median round trip {round_trip:.0} µs, expected {expected:.0}");
        assert!(
            close(round_trip, expected),
            "rtt={rtt_ms}ms: median round trip {round_trip:.0} µs, expected {expected:.0}"
        );
        // A connect is SYN out, SYN-ACK back: one round trip (the median of five single samples).
        let taken = connects(&link);
        let expected = rtt_ms as f64 * 1000.0 + base_connect_us;
        assert!(
            close(median(taken.clone()), expected),
            "rtt={rtt_ms}ms: connects took {taken:.0?} µs, expected {expected:.0}"
        );
    }
}

#[test]
fn a_megabyte_takes_what_the_bandwidth_says() {
    const BYTES: usize = 1 << 20;
    const BITS_PER_S: f64 = 10e6;
    let _alone = alone();
    let link = link("rtt=0,bandwidth=10mbit");
    let listener = link.server.run(|| TcpListener::bind((SERVER_ADDR, 0)).map_err(|e| e.to_string())).unwrap();
    let port = listener.local_addr().unwrap().port();
    let sink = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut body = vec![0u8; BYTES];
        s.read_exact(&mut body).unwrap();
        s.write_all(b"k").unwrap();
    });
    let mut stream = link.client.run(|| TcpStream::connect((SERVER_ADDR, port)).map_err(|e| e.to_string())).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let before = link.stats();
    let started = Instant::now();
    stream.write_all(&vec![7u8; BYTES]).unwrap();
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).unwrap();
    let took = started.elapsed().as_secs_f64();
    sink.join().unwrap();
    // What the lane carried, headers included, is what the bandwidth is spent on.
    let carried = link.stats().since(&before).up.bytes;
    assert!(carried as usize > BYTES, "only {carried} bytes crossed for a {BYTES}-byte body");
    let expected = carried as f64 * 8.0 / BITS_PER_S;
    assert!(
        (took - expected).abs() <= 0.05 * expected,
        "{BYTES} bytes ({carried} on the wire) took {took:.3} s at 10 Mbit/s, expected {expected:.3} s"
    );
    assert_eq!(link.stats().up.queue_drops, 0, "a 1000-packet queue holds a megabyte");
}

#[test]
fn loss_drops_that_share_of_packets_and_tcp_still_delivers() {
    let _alone = alone();
    let link = link("loss=0.05,seed=3");
    let p = ping_pong(&link, 150).unwrap();
    assert_eq!(p.round_trips_us.len(), 150);
    let s = link.stats();
    let (sent, lost) = (s.up.packets + s.down.packets, s.up.lost + s.down.lost);
    let share = lost as f64 / sent as f64;
    assert!((0.015..0.10).contains(&share), "{lost} of {sent} packets lost at loss=0.05");
}

/// A UDP ping-pong of 64 bytes from the client namespace, `round_trips` times: each one's time, µs.
fn udp_round_trips(link: &Link, round_trips: usize) -> Vec<f64> {
    let server = link.server.run(|| UdpSocket::bind((SERVER_ADDR, 0)).map_err(|e| e.to_string())).unwrap();
    let port = server.local_addr().unwrap().port();
    server.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        for _ in 0..round_trips {
            let (n, from) = server.recv_from(&mut buf).expect("a ping within 10 s");
            server.send_to(&buf[..n], from).unwrap();
        }
    });
    let client = link.client.run(|| UdpSocket::bind(("0.0.0.0", 0)).map_err(|e| e.to_string())).unwrap();
    client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    client.connect((SERVER_ADDR, port)).unwrap();
    let mut buf = [7u8; 64];
    let times = (0..round_trips)
        .map(|_| {
            let t = Instant::now();
            client.send(&buf).unwrap();
            client.recv(&mut buf).expect("a pong within 10 s");
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    echo.join().unwrap();
    times
}

#[test]
fn udp_round_trips_take_the_configured_rtt_as_tcps_do() {
    // QUIC rides on UDP: the link forwards its datagrams as it forwards TCP's segments.
    let _alone = alone();
    let link = link("rtt=0");
    let base_us = median(udp_round_trips(&link, 200));
    assert!(base_us < 2_000.0, "the link alone costs {base_us:.0} µs a UDP round trip");
    for (rtt_ms, round_trips) in [(10u64, 40), (40, 15)] {
        link.set_spec(&LinkSpec::parse(&format!("rtt={rtt_ms}ms")).unwrap());
        let round_trip = median(udp_round_trips(&link, round_trips));
        let expected = rtt_ms as f64 * 1000.0 + base_us;
        assert!(
            close(round_trip, expected),
            "rtt={rtt_ms}ms: median UDP round trip {round_trip:.0} µs, expected {expected:.0}"
        );
    }
}

#[test]
fn loss_drops_that_share_of_udp_datagrams_and_only_those() {
    const SENT: u32 = 4000;
    let _alone = alone();
    let link = link("loss=0.05,seed=5");
    let server = link.server.run(|| UdpSocket::bind((SERVER_ADDR, 0)).map_err(|e| e.to_string())).unwrap();
    let port = server.local_addr().unwrap().port();
    let client = link.client.run(|| UdpSocket::bind(("0.0.0.0", 0)).map_err(|e| e.to_string())).unwrap();
    client.connect((SERVER_ADDR, port)).unwrap();
    let before = link.stats();
    // In bursts of 100 that the receiver takes before the next: no queue or socket buffer fills,
    // so the link's loss is the only loss.
    server.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut received = vec![];
    for burst in 0..SENT / 100 {
        for seq in burst * 100..(burst + 1) * 100 {
            client.send(&seq.to_be_bytes()).unwrap();
        }
        let due = |received: usize| received as u64 + link.stats().since(&before).up.lost >= (burst as u64 + 1) * 100;
        let started = Instant::now();
        while !due(received.len()) {
            assert!(started.elapsed() < Duration::from_secs(10), "burst {burst} never arrived whole");
            let mut buf = [0u8; 4];
            if let Ok(4) = server.recv(&mut buf) {
                received.push(u32::from_be_bytes(buf));
            }
        }
    }
    let lost = link.stats().since(&before).up.lost;
    assert_eq!(received.len() as u64 + lost, SENT as u64, "every datagram arrived or the link counted it lost");
    assert!(received.windows(2).all(|w| w[0] < w[1]), "in order, none twice");
    let share = lost as f64 / SENT as f64;
    assert!((0.035..0.065).contains(&share), "{lost} of {SENT} datagrams lost at loss=0.05");
}
