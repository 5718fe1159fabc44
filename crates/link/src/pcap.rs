//! Packet captures in the pcap format Wireshark and tcpdump read: nanosecond timestamps (magic
//! 0xa1b23c4d), link type RAW (the TUN devices carry bare IP packets), each packet cut to a
//! snap length. Written by the link's forwarder as the client's side sees its packets, up to a
//! cap on the file's size ([`Writer`]); read back record by record ([`Reader`]) by
//! [`crate::phases`], so reading takes the same memory whatever the file's size.

mod format;
mod read;
mod write;

#[cfg(test)]
pub(crate) use format::RECORD_HEADER;
pub use format::{Packet, LINKTYPE_RAW};
pub use read::Reader;
pub use write::{Writer, Written};

use std::time::Duration;

/// Enough of a packet for its IP and TCP headers, a TLS record's header and a ServerHello, a DNS
/// question, or an HTTP request line: what the phases are read from, in a small file.
pub const DEFAULT_SNAPLEN: u32 = 512;

/// A capture's file is at most this large unless told otherwise: room for at least 500,000
/// packets cut to the default snap length (528 bytes a record at most).
pub const DEFAULT_CAP: u64 = 256 << 20;
/// [`DEFAULT_CAP`] as it is written (a CLI's default).
pub const DEFAULT_CAP_TEXT: &str = "256MiB";
/// The least cap: room for the file's header and a few packets.
pub const MIN_CAP: u64 = 1 << 10;
/// The most: 1024GiB.
pub const MAX_CAP: u64 = 1 << 40;

/// A capture's cap, `256MiB`, `64kB`, `1GB` or `30000B`, from [`MIN_CAP`] to [`MAX_CAP`].
pub fn parse_cap(text: &str) -> Result<u64, crate::LinkError> {
    crate::units::size("capture cap", text, MIN_CAP, MAX_CAP).map_err(crate::LinkError::Invalid)
}

/// `256MiB`, `8KiB`, `30kB`: a cap as [`parse_cap`] reads it.
pub fn show_cap(bytes: u64) -> String {
    crate::units::show_size(bytes)
}

/// How long the end of a capture waits for the forwarder to write it out: the forwarder wakes
/// every 20 ms at the latest and has at most a batch of a megabyte left to write, so past this
/// the disk (or the forwarder) is stuck, and the file is reported cut.
pub const FINISH_WITHIN: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests;
