//! Writing a capture: records go out in batches, whole records only, and none past the cap, so
//! the file is a valid pcap whenever it stops growing (a killed run aside: see [`super::Reader`]).

use super::format::{FILE_HEADER, LINKTYPE_RAW, MAGIC_NS, RECORD_HEADER};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Records are written out in batches of about this many bytes.
const BATCH: usize = 1 << 20;

/// A capture being written.
pub struct Writer {
    out: File,
    batch: Vec<u8>,
    snaplen: u32,
    cap: u64,
    /// What the file holds once the batch is out: its header and the records kept.
    bytes: u64,
    packets: u64,
    /// Packets seen since a record did not fit under the cap.
    not_written: u64,
}

/// What a capture holds once written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub packets: u64,
    /// The file's size.
    pub bytes: u64,
    pub cap: u64,
    /// Packets seen after the cap was reached: not in the file.
    pub not_written: u64,
}

impl Written {
    /// The line that says the capture was cut at its cap (None: every packet seen is in it).
    pub fn cut(&self) -> Option<String> {
        (self.not_written > 0).then(|| {
            format!("capture cut at {}: {} packets not written", crate::units::show_size(self.cap), self.not_written)
        })
    }
}

impl Writer {
    /// A new file at `path` (an existing one is replaced) of at most `cap` bytes.
    pub fn create(path: &Path, snaplen: u32, cap: u64) -> std::io::Result<Writer> {
        let mut out = File::create(path)?;
        let mut header = Vec::with_capacity(FILE_HEADER as usize);
        header.extend_from_slice(&MAGIC_NS.to_le_bytes());
        header.extend_from_slice(&[2, 0, 4, 0]); // version 2.4
        for field in [0u32, 0, snaplen, LINKTYPE_RAW] {
            header.extend_from_slice(&field.to_le_bytes()); // thiszone, sigfigs, snaplen, network
        }
        out.write_all(&header)?;
        let batch = Vec::with_capacity(BATCH + 64 * 1024);
        Ok(Writer { out, batch, snaplen, cap, bytes: FILE_HEADER, packets: 0, not_written: 0 })
    }

    /// One packet, seen at `at`: kept while its record fits under the cap; from the first that
    /// does not on, counted only (a capture with a gap would show phases that did not happen).
    pub fn packet(&mut self, at: SystemTime, packet: &[u8]) -> std::io::Result<()> {
        let kept = packet.len().min(self.snaplen as usize);
        let record = RECORD_HEADER + kept as u64;
        if self.not_written > 0 || self.bytes + record > self.cap {
            self.not_written += 1;
            return Ok(());
        }
        let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
        for field in [since.as_secs() as u32, since.subsec_nanos(), kept as u32, packet.len() as u32] {
            self.batch.extend_from_slice(&field.to_le_bytes());
        }
        self.batch.extend_from_slice(&packet[..kept]);
        self.bytes += record;
        self.packets += 1;
        if self.batch.len() >= BATCH {
            self.write_batch()?;
        }
        Ok(())
    }

    /// Writes out the records kept so far and closes the file: what it holds is then on its way to
    /// the disk, readable by anyone.
    pub fn finish(mut self) -> std::io::Result<Written> {
        self.write_batch()?;
        let written =
            Written { packets: self.packets, bytes: self.bytes, cap: self.cap, not_written: self.not_written };
        drop(self.out); // closed here, before anyone is told the capture is written
        Ok(written)
    }

    fn write_batch(&mut self) -> std::io::Result<()> {
        let written = self.out.write_all(&self.batch);
        self.batch.clear();
        written
    }
}
