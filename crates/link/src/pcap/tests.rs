//! Captures written with the crate's writer (or by hand) and read back.

use super::format::{FILE_HEADER, MAGIC_US, RECORD_HEADER};
use super::*;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// A directory of the test's own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("callbench-pcap-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn t0() -> SystemTime {
    UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789)
}

/// Every packet of the file.
fn read_all(path: &std::path::Path) -> Vec<Packet> {
    read(path).unwrap()
}

#[test]
fn what_is_written_reads_back_cut_to_the_snap_length() {
    let dir = Dir::new("snap");
    let path = dir.0.join("a.pcap");
    let mut w = Writer::create(&path, 8, DEFAULT_CAP).unwrap();
    w.packet(t0(), &[0x45, 1, 2, 3]).unwrap();
    w.packet(t0() + Duration::from_micros(40), &[0x45; 20]).unwrap();
    let written = w.finish().unwrap();
    assert_eq!((written.packets, written.not_written, written.cut()), (2, 0, None));
    assert_eq!(written.bytes, std::fs::metadata(&path).unwrap().len());
    let packets = read_all(&path);
    assert_eq!(packets.len(), 2);
    assert_eq!(
        packets[0],
        Packet { at: Duration::new(1_700_000_000, 123_456_789), len: 4, bytes: vec![0x45, 1, 2, 3] }
    );
    assert_eq!((packets[1].len, packets[1].bytes.len()), (20, 8));
    assert_eq!(packets[1].at - packets[0].at, Duration::from_micros(40));
}

#[test]
fn a_capture_stops_at_its_cap_on_a_records_end() {
    let dir = Dir::new("cap");
    let path = dir.0.join("a.pcap");
    let packet = [0x45u8; 100];
    let record = RECORD_HEADER + packet.len() as u64;
    // Room for three records and most of a fourth.
    let cap = FILE_HEADER + 3 * record + record / 2;
    let mut w = Writer::create(&path, DEFAULT_SNAPLEN, cap).unwrap();
    for i in 0..10 {
        w.packet(t0() + Duration::from_millis(i), &packet).unwrap();
    }
    // Small enough to fit in what is left, but after the cut: not written either.
    w.packet(t0() + Duration::from_millis(10), &[0x45; 4]).unwrap();
    let written = w.finish().unwrap();
    assert_eq!((written.packets, written.not_written), (3, 8));
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(size, FILE_HEADER + 3 * record);
    assert!(size <= cap && written.bytes == size);
    assert_eq!(
        written.cut().as_deref(),
        Some(format!("capture cut at {}: 8 packets not written", show_cap(cap)).as_str())
    );
    assert_eq!(read_all(&path).len(), 3, "a valid pcap of the packets before the cap");
}

#[test]
fn other_files_are_refused_with_a_reason() {
    assert!(parse(b"short").unwrap_err().contains("not a pcap"));
    let mut ethernet = Vec::new();
    for f in [MAGIC_US, 0x0004_0002, 0, 0, 65535, 1] {
        ethernet.extend_from_slice(&f.to_le_bytes());
    }
    assert!(parse(&ethernet).unwrap_err().contains("link type 1"));
    ethernet[20] = LINKTYPE_RAW as u8;
    ethernet.extend_from_slice(&[0; 10]);
    assert!(parse(&ethernet).unwrap_err().contains("cut short"));
}

#[test]
fn a_cap_is_a_size_within_its_range() {
    assert_eq!(parse_cap(DEFAULT_CAP_TEXT), Ok(DEFAULT_CAP));
    assert_eq!(show_cap(DEFAULT_CAP), DEFAULT_CAP_TEXT);
    assert_eq!(parse_cap("8KiB"), Ok(8 << 10));
    assert!(parse_cap("100B").unwrap_err().contains("out of range"));
    assert!(parse_cap("2000GB").unwrap_err().contains("out of range"));
    assert!(parse_cap("lots").unwrap_err().contains("bad capture cap"));
}
