//! The pcap format's numbers, and one packet of it: what the reader and the writer share.

use std::time::Duration;

/// pcap with nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// pcap with microsecond timestamps (what most tools write).
pub const MAGIC_US: u32 = 0xa1b2_c3d4;
/// LINKTYPE_RAW: each packet starts with its IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// The file's header, then each record's header before its bytes.
pub const FILE_HEADER: u64 = 24;
pub const RECORD_HEADER: u64 = 16;

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// When it was seen, from the Unix epoch.
    pub at: Duration,
    /// Its length on the wire (the bytes below may be fewer: the snap length).
    pub len: u32,
    pub bytes: Vec<u8>,
}
