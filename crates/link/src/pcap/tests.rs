//! Captures written with the crate's writer (or by hand) and read back.

use super::format::{FILE_HEADER, MAGIC_US, RECORD_HEADER};
use super::*;
use callbench_primitives::scratch::ScratchDir;
use std::time::{SystemTime, UNIX_EPOCH};

/// A directory of the test's own, removed when dropped.
fn t0() -> SystemTime {
    UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789)
}

/// Every packet of the file, and where it is cut.
fn read_all(path: &std::path::Path) -> (Vec<Packet>, Option<u64>) {
    let mut reader = Reader::open(path).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        packets.push(p);
    }
    (packets, reader.cut_at())
}

fn refused(bytes: &[u8]) -> String {
    let e = Reader::new(bytes).err().expect("refused");
    assert!(matches!(e, crate::LinkError::Invalid(_)), "{e:?}");
    e.to_string()
}

#[test]
fn what_is_written_reads_back_cut_to_the_snap_length() {
    let dir = ScratchDir::new("callbench-pcap-snap").unwrap();
    let path = dir.join("a.pcap");
    let mut w = Writer::create(&path, 8, DEFAULT_CAP).unwrap();
    w.packet(t0(), &[0x45, 1, 2, 3]).unwrap();
    w.packet(t0() + Duration::from_micros(40), &[0x45; 20]).unwrap();
    let written = w.finish().unwrap();
    assert_eq!((written.packets, written.not_written, written.cut()), (2, 0, None));
    assert_eq!(written.bytes, std::fs::metadata(&path).unwrap().len());
    let (packets, cut) = read_all(&path);
    assert_eq!((packets.len(), cut), (2, None));
    assert_eq!(
        packets[0],
        Packet { at: Duration::new(1_700_000_000, 123_456_789), len: 4, bytes: vec![0x45, 1, 2, 3] }
    );
    assert_eq!((packets[1].len, packets[1].bytes.len()), (20, 8));
    assert_eq!(packets[1].at - packets[0].at, Duration::from_micros(40));
}

#[test]
fn a_capture_stops_at_its_cap_on_a_records_end() {
    let dir = ScratchDir::new("callbench-pcap-cap").unwrap();
    let path = dir.join("a.pcap");
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
    let (packets, cut) = read_all(&path);
    assert_eq!((packets.len(), cut), (3, None), "a valid pcap of the packets before the cap");
}

#[test]
fn a_file_cut_inside_a_record_keeps_the_packets_before_it() {
    let dir = ScratchDir::new("callbench-pcap-cut").unwrap();
    let path = dir.join("a.pcap");
    let mut w = Writer::create(&path, DEFAULT_SNAPLEN, DEFAULT_CAP).unwrap();
    for i in 0..3 {
        w.packet(t0() + Duration::from_millis(i), &[0x45; 60]).unwrap();
    }
    let written = w.finish().unwrap();
    let third = FILE_HEADER + 2 * (RECORD_HEADER + 60);
    // Inside the third record's bytes, right after its header, and inside its header (each shorter).
    for end in [written.bytes - 1, third + RECORD_HEADER, third + RECORD_HEADER / 2] {
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(end).unwrap();
        let (packets, cut) = read_all(&path);
        assert_eq!((packets.len(), cut), (2, Some(third)), "cut at byte {end}");
    }
    let mut reader = Reader::open(&path).unwrap();
    while reader.next_packet().unwrap().is_some() {}
    assert_eq!(reader.next_packet(), Ok(None), "nothing more after the cut");
}

#[test]
fn other_byte_orders_and_microseconds_are_read() {
    let mut file = Vec::new();
    for f in [MAGIC_US, 0x0002_0004, 0, 0, 65535, LINKTYPE_RAW] {
        file.extend_from_slice(&f.to_be_bytes());
    }
    for f in [1_700_000_000u32, 250, 2, 40] {
        file.extend_from_slice(&f.to_be_bytes());
    }
    file.extend_from_slice(&[0x45, 0]);
    let mut reader = Reader::new(&file[..]).unwrap();
    let p = reader.next_packet().unwrap().unwrap();
    assert_eq!((p.at, p.len, p.bytes), (Duration::new(1_700_000_000, 250_000), 40, vec![0x45, 0]));
    assert_eq!((reader.next_packet(), reader.cut_at()), (Ok(None), None));
}

#[test]
fn other_files_and_damaged_records_are_refused_with_a_reason() {
    assert!(refused(b"short").contains("not a pcap"));
    let mut ethernet = Vec::new();
    for f in [MAGIC_US, 0x0004_0002, 0, 0, 65535, 1] {
        ethernet.extend_from_slice(&f.to_le_bytes());
    }
    assert!(refused(&ethernet).contains("link type 1"));
    let mut raw = ethernet.clone();
    raw[20] = LINKTYPE_RAW as u8;
    for f in [1_700_000_000u32, 0, u32::MAX, 40] {
        raw.extend_from_slice(&f.to_le_bytes());
    }
    let damaged = Reader::new(&raw[..]).unwrap().next_packet().unwrap_err();
    assert!(matches!(damaged, crate::LinkError::Invalid(_)), "{damaged:?}");
    let damaged = damaged.to_string();
    assert!(damaged.contains("a damaged file") && damaged.contains("at byte 24"), "{damaged}");
}

#[test]
fn a_cap_is_a_size_within_its_range() {
    assert_eq!(parse_cap(DEFAULT_CAP_TEXT), Ok(DEFAULT_CAP));
    assert_eq!(show_cap(DEFAULT_CAP), DEFAULT_CAP_TEXT);
    assert_eq!(parse_cap("8KiB"), Ok(8 << 10));
    assert!(parse_cap("100B").unwrap_err().to_string().contains("out of range"));
    assert!(parse_cap("2000GB").unwrap_err().to_string().contains("out of range"));
    assert!(parse_cap("lots").unwrap_err().to_string().contains("bad capture cap"));
}

#[test]
fn a_file_that_cannot_be_read_is_io_and_one_that_is_no_capture_invalid() {
    use crate::LinkError;
    let dir = ScratchDir::new("callbench-pcap-kinds").unwrap();
    let missing = dir.join("none.pcap");
    let named = |m: &str| m.starts_with(&missing.display().to_string());
    assert!(matches!(Reader::open(&missing), Err(LinkError::Io(m)) if named(&m)));
    let short = dir.join("short.pcap");
    std::fs::write(&short, b"short").unwrap();
    let err = Reader::open(&short).err().expect("refused");
    assert_eq!(err, LinkError::Invalid(format!("{}: not a pcap file (shorter than its header)", short.display())));
    let phases = crate::phases::read_file(&missing, None).unwrap_err();
    assert!(matches!(phases, LinkError::Io(_)), "{phases:?}");
}
