//! A capture of 300 MB (written with the crate's own writer) is read in bounded memory: the
//! reading holds a window's packets and each connection's state, never the file.

use super::order::HELD_BYTES;
use super::packet::build::tcp;
use super::packet::{ACK, SYN};
use super::*;
use std::time::UNIX_EPOCH;

/// The process's peak resident memory so far, bytes (VmHWM; nextest runs each test in a process
/// of its own).
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/self/status");
    let kb: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number of kB");
    kb * 1024
}

#[test]
fn a_large_capture_is_read_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("callbench-large-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.pcap");
    let size: u64 = 300_000_000;
    // One download: a connect, a request, then full segments a microsecond apart (far more than
    // a window holds, so the bound on held bytes is what limits it).
    let (c, s) = ("198.18.0.1:40000".parse().unwrap(), "198.18.0.2:443".parse().unwrap());
    let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut w = pcap::Writer::create(&path, pcap::DEFAULT_SNAPLEN, size).unwrap();
    w.packet(t0, &tcp(c, s, SYN, b"")).unwrap();
    w.packet(t0 + Duration::from_millis(20), &tcp(s, c, SYN | ACK, b"")).unwrap();
    w.packet(t0 + Duration::from_millis(21), &tcp(c, s, ACK, b"GET /big HTTP/1.1\r\n\r\n")).unwrap();
    let segment = tcp(s, c, ACK, &[b'x'; 1448]);
    let mut at = t0 + Duration::from_millis(41);
    let mut written = 3u64;
    while std::fs::metadata(&path).map_or(0, |m| m.len()) < size - (1 << 21) {
        for _ in 0..1000 {
            w.packet(at, &segment).unwrap();
            at += Duration::from_micros(1);
        }
        written += 1000;
    }
    let file = w.finish().unwrap();
    assert_eq!((file.packets, file.not_written), (written, 0));
    let before = peak_memory();
    let phases = read_file(&path, None);
    let grew = peak_memory().saturating_sub(before);
    std::fs::remove_dir_all(&dir).unwrap();
    let phases = phases.unwrap();
    assert_eq!((phases.packets as u64, phases.connections.len()), (written, 1));
    let answer = phases.connections[0].exchanges[0].answer_bytes;
    assert_eq!(answer, (written - 3) * 1448, "every segment read");
    // The held packets' bytes and as much again for their bookkeeping: far below the file's size.
    let bound = 2 * HELD_BYTES as u64;
    assert!(bound < file.bytes / 8);
    assert!(grew < bound, "reading {} MB took {} MB more at its peak", file.bytes / 1_000_000, grew / 1_000_000);
    eprintln!("reading {} MB took {:.1} MB more at its peak", file.bytes / 1_000_000, grew as f64 / 1e6);
}
