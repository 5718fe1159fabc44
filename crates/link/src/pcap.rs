//! Packet captures in the pcap format Wireshark and tcpdump read: nanosecond timestamps (magic
//! 0xa1b23c4d), link type RAW (the TUN devices carry bare IP packets), each packet cut to a
//! snap length. Written by the link's forwarder as the client's side sees its packets, read back by
//! [`crate::phases`].

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// pcap with nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// pcap with microsecond timestamps (what most tools write).
const MAGIC_US: u32 = 0xa1b2_c3d4;
/// LINKTYPE_RAW: each packet starts with its IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Enough of a packet for its IP and TCP headers, a TLS record's header and a ServerHello, a DNS
/// question, or an HTTP request line: what the phases are read from, in a small file.
pub const DEFAULT_SNAPLEN: u32 = 512;

/// Records are written out in batches of about this many bytes, whole records only: a capture
/// cut short (a killed run) still ends on a packet's end.
const BATCH: usize = 1 << 20;

/// A capture being written.
pub struct Writer {
    out: File,
    batch: Vec<u8>,
    snaplen: u32,
}

impl Writer {
    /// A new file at `path` (an existing one is replaced).
    pub fn create(path: &Path, snaplen: u32) -> std::io::Result<Writer> {
        let mut out = File::create(path)?;
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&MAGIC_NS.to_le_bytes());
        header.extend_from_slice(&[2, 0, 4, 0]); // version 2.4
        for field in [0u32, 0, snaplen, LINKTYPE_RAW] {
            header.extend_from_slice(&field.to_le_bytes()); // thiszone, sigfigs, snaplen, network
        }
        out.write_all(&header)?;
        Ok(Writer { out, batch: Vec::with_capacity(BATCH + 64 * 1024), snaplen })
    }

    /// One packet, seen at `at`.
    pub fn packet(&mut self, at: SystemTime, packet: &[u8]) -> std::io::Result<()> {
        let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
        let kept = packet.len().min(self.snaplen as usize);
        for field in [since.as_secs() as u32, since.subsec_nanos(), kept as u32, packet.len() as u32] {
            self.batch.extend_from_slice(&field.to_le_bytes());
        }
        self.batch.extend_from_slice(&packet[..kept]);
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes out the records kept so far.
    pub fn flush(&mut self) -> std::io::Result<()> {
        let written = self.out.write_all(&self.batch);
        self.batch.clear();
        written
    }
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// When it was seen, from the Unix epoch.
    pub at: Duration,
    /// Its length on the wire (the bytes below may be fewer: the snap length).
    pub len: u32,
    pub bytes: Vec<u8>,
}

/// Every packet of a pcap file of link type RAW (either byte order, µs or ns timestamps).
pub fn read(path: &Path) -> Result<Vec<Packet>, String> {
    let mut data = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut data)).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&data).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`read`] from memory.
pub fn parse(data: &[u8]) -> Result<Vec<Packet>, String> {
    if data.len() < 24 {
        return Err("not a pcap file (shorter than its header)".into());
    }
    let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
    let (little, nanos) = match magic {
        MAGIC_NS => (true, true),
        MAGIC_US => (true, false),
        m if m.swap_bytes() == MAGIC_NS => (false, true),
        m if m.swap_bytes() == MAGIC_US => (false, false),
        _ => return Err("not a pcap file (pcapng is not read: save as pcap)".into()),
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = data[at..at + 4].try_into().unwrap();
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let linktype = u32_at(20);
    if linktype != LINKTYPE_RAW {
        return Err(format!("link type {linktype}: only RAW (101, bare IP packets, as the link writes) is read"));
    }
    let mut packets = Vec::new();
    let mut at = 24;
    while at < data.len() {
        if at + 16 > data.len() {
            return Err(format!("a packet header cut short at byte {at}"));
        }
        let (secs, frac, kept, len) = (u32_at(at), u32_at(at + 4), u32_at(at + 8) as usize, u32_at(at + 12));
        let start = at + 16;
        if start + kept > data.len() {
            return Err(format!("a packet cut short at byte {start}"));
        }
        let frac_ns = if nanos { frac } else { frac.saturating_mul(1000) };
        let when = Duration::new(u64::from(secs), frac_ns.min(999_999_999));
        packets.push(Packet { at: when, len, bytes: data[start..start + kept].to_vec() });
        at = start + kept;
    }
    Ok(packets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_cut_to_the_snap_length() {
        let dir = std::env::temp_dir().join(format!("callbench-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.pcap");
        let mut w = Writer::create(&path, 8).unwrap();
        let t0 = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        w.packet(t0, &[0x45, 1, 2, 3]).unwrap();
        w.packet(t0 + Duration::from_micros(40), &[0x45; 20]).unwrap();
        w.flush().unwrap();
        drop(w);
        let packets = read(&path).unwrap();
        assert_eq!(packets.len(), 2);
        assert_eq!(
            packets[0],
            Packet { at: Duration::new(1_700_000_000, 123_456_789), len: 4, bytes: vec![0x45, 1, 2, 3] }
        );
        assert_eq!((packets[1].len, packets[1].bytes.len()), (20, 8));
        assert_eq!(packets[1].at - packets[0].at, Duration::from_micros(40));
        std::fs::remove_dir_all(&dir).unwrap();
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
}
