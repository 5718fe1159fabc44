//! Reading a capture record by record from a buffered file: the memory it takes is one record's,
//! whatever the file's size. A file that ends inside a record (a run killed while writing it) is
//! read up to that record, and the reader says where it was cut.

use super::format::{Packet, FILE_HEADER, LINKTYPE_RAW, MAGIC_NS, MAGIC_US, RECORD_HEADER};
use crate::LinkError;
use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;
use std::time::Duration;

/// The most a record may hold, as libpcap allows (its MAXIMUM_SNAPLEN): a larger length is a
/// damaged file, not a packet to make room for.
const MAX_RECORD: usize = 262_144;

/// The packets of a pcap file of link type RAW (either byte order, µs or ns timestamps), in the
/// order the file has them.
pub struct Reader<R> {
    input: R,
    little: bool,
    nanos: bool,
    /// Bytes read so far: where the next record starts.
    offset: u64,
    /// Where the record the file ends inside starts.
    cut_at: Option<u64>,
}

impl Reader<BufReader<File>> {
    /// Opens `path` and reads its header; errors name the file.
    pub fn open(path: &Path) -> Result<Reader<BufReader<File>>, LinkError> {
        let file = File::open(path).map_err(|e| LinkError::Io(format!("{}: {e}", path.display())))?;
        Reader::new(BufReader::with_capacity(1 << 16, file))
            .map_err(|e| e.map_message(|m| format!("{}: {m}", path.display())))
    }
}

impl<R: Read> Reader<R> {
    /// Reads the file's header from `input`: [`LinkError::Invalid`] if it is not a pcap of raw IP
    /// packets, [`LinkError::Io`] if reading failed.
    pub fn new(mut input: R) -> Result<Reader<R>, LinkError> {
        let mut header = [0u8; FILE_HEADER as usize];
        let got = fill(&mut input, &mut header).map_err(|e| LinkError::Io(e.to_string()))?;
        if got < header.len() {
            return Err(LinkError::Invalid("not a pcap file (shorter than its header)".into()));
        }
        let magic = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
        let (little, nanos) = match magic {
            MAGIC_NS => (true, true),
            MAGIC_US => (true, false),
            m if m.swap_bytes() == MAGIC_NS => (false, true),
            m if m.swap_bytes() == MAGIC_US => (false, false),
            _ => return Err(LinkError::Invalid("not a pcap file (pcapng is not read: save as pcap)".into())),
        };
        let reader = Reader { input, little, nanos, offset: FILE_HEADER, cut_at: None };
        let linktype = reader.u32_at(&header, 20);
        if linktype != LINKTYPE_RAW {
            return Err(LinkError::Invalid(format!(
                "link type {linktype}: only RAW (101, bare IP packets, as the link writes) is read"
            )));
        }
        Ok(reader)
    }

    /// The next packet; None at the file's end, or where it ends inside a record (then
    /// [`Reader::cut_at`] says where). [`LinkError::Invalid`] for a damaged record, [`LinkError::Io`]
    /// if reading failed.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, LinkError> {
        if self.cut_at.is_some() {
            return Ok(None);
        }
        let start = self.offset;
        let mut header = [0u8; RECORD_HEADER as usize];
        let read_failed = |e: std::io::Error| LinkError::Io(format!("at byte {start}: {e}"));
        match fill(&mut self.input, &mut header).map_err(read_failed)? {
            0 => return Ok(None),
            n if n < header.len() => return Ok(self.cut(start)),
            _ => {}
        }
        let (secs, frac, kept, len) = (
            self.u32_at(&header, 0),
            self.u32_at(&header, 4),
            self.u32_at(&header, 8) as usize,
            self.u32_at(&header, 12),
        );
        if kept > MAX_RECORD {
            return Err(LinkError::Invalid(format!(
                "a packet of {kept} bytes at byte {start}: a damaged file (at most {MAX_RECORD})"
            )));
        }
        let mut bytes = vec![0u8; kept];
        if fill(&mut self.input, &mut bytes).map_err(read_failed)? < kept {
            return Ok(self.cut(start));
        }
        self.offset = start + RECORD_HEADER + kept as u64;
        let frac_ns = if self.nanos { frac } else { frac.saturating_mul(1000) };
        let at = Duration::new(u64::from(secs), frac_ns.min(999_999_999));
        Ok(Some(Packet { at, len, bytes }))
    }

    /// Where the file ends inside a record, once read up to there (None: it ends on a record's end).
    pub fn cut_at(&self) -> Option<u64> {
        self.cut_at
    }

    fn cut(&mut self, at: u64) -> Option<Packet> {
        self.cut_at = Some(at);
        None
    }

    fn u32_at(&self, bytes: &[u8], at: usize) -> u32 {
        let b: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
        if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    }
}

/// Reads into all of `buf` unless the input ends first; how many bytes it read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
