//! Reading a capture: the whole file into memory, then each record.

use super::format::{Packet, FILE_HEADER, LINKTYPE_RAW, MAGIC_NS, MAGIC_US, RECORD_HEADER};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// Every packet of a pcap file of link type RAW (either byte order, µs or ns timestamps).
pub fn read(path: &Path) -> Result<Vec<Packet>, String> {
    let mut data = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut data)).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&data).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`read`] from memory.
pub fn parse(data: &[u8]) -> Result<Vec<Packet>, String> {
    if data.len() < FILE_HEADER as usize {
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
    let mut at = FILE_HEADER as usize;
    while at < data.len() {
        if at + RECORD_HEADER as usize > data.len() {
            return Err(format!("a packet header cut short at byte {at}"));
        }
        let (secs, frac, kept, len) = (u32_at(at), u32_at(at + 4), u32_at(at + 8) as usize, u32_at(at + 12));
        let start = at + RECORD_HEADER as usize;
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
