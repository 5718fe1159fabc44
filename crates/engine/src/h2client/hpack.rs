//! HPACK decoding of answers (RFC 7541): the static and dynamic tables, integers, string
//! literals and the canonical Huffman code. Every malformed block is an error, never a panic.
//! Ours because the crates at hand either panic on bad input or rebuild their Huffman table for
//! every string (much of the client's CPU on answers with Huffman-coded headers:
//! bench/results/code-notes-2026-12.md#huffman-tables-rebuilt-per-string).

use std::collections::VecDeque;
use std::sync::OnceLock;

/// The largest table we let the server use: the default, as we never announce another.
pub const TABLE_SIZE: usize = 4096;

/// RFC 7541 Appendix A.
static STATIC_TABLE: &[(&[u8], &[u8])] = &[
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// Code lengths of the Huffman code's 256 symbols (RFC 7541 Appendix B; the table of the h2 crate,
/// MIT). The code is canonical, so the lengths define it; EOS (256) is 30 bits.
const CODE_LENGTHS: [u8; 256] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28,
    28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12,
    10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6,
    5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22,
    22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20,
    22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28,
    27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28,
    27, 27, 27, 27, 27, 26,
];
const EOS: u16 = 256;

/// The canonical code by length: for each bit length, the first code, how many codes, and
/// where their symbols start in `symbols` (sorted by length, then symbol).
struct Huffman {
    first: [u32; 31],
    count: [u32; 31],
    offset: [usize; 31],
    symbols: Vec<u16>,
}

fn huffman() -> &'static Huffman {
    static TABLE: OnceLock<Huffman> = OnceLock::new();
    TABLE.get_or_init(|| {
        let length = |s: u16| if s == EOS { 30 } else { CODE_LENGTHS[s as usize] as usize };
        let mut symbols: Vec<u16> = (0..=EOS).collect();
        symbols.sort_by_key(|&s| (length(s), s));
        let mut h = Huffman { first: [0; 31], count: [0; 31], offset: [0; 31], symbols };
        for &s in &h.symbols {
            h.count[length(s)] += 1;
        }
        let (mut code, mut at) = (0u32, 0usize);
        for len in 1..=30 {
            h.first[len] = code;
            h.offset[len] = at;
            code = (code + h.count[len]) << 1;
            at += h.count[len] as usize;
        }
        h
    })
}

/// Appends the Huffman-decoded `input` to `out`.
fn unhuffman(input: &[u8], out: &mut Vec<u8>) -> Result<(), ()> {
    let h = huffman();
    let (mut code, mut len) = (0u32, 0usize);
    for byte in input {
        for shift in (0..8).rev() {
            code = (code << 1) | u32::from((byte >> shift) & 1);
            len += 1;
            if len > 30 {
                return Err(());
            }
            let index = code.wrapping_sub(h.first[len]);
            if code >= h.first[len] && index < h.count[len] {
                let symbol = h.symbols[h.offset[len] + index as usize];
                if symbol == EOS {
                    return Err(()); // RFC 7541 §5.2: EOS in a string is an error
                }
                out.push(symbol as u8);
                code = 0;
                len = 0;
            }
        }
    }
    // Padding: fewer than 8 bits, all ones (the EOS prefix).
    if len >= 8 || code != (1 << len) - 1 {
        return Err(());
    }
    Ok(())
}

/// An integer with an `prefix`-bit prefix at the start of `input`, and the bytes it took.
fn integer(input: &[u8], prefix: u8) -> Result<(usize, usize), ()> {
    let max = (1usize << prefix) - 1;
    let first = *input.first().ok_or(())? as usize & max;
    if first < max {
        return Ok((first, 1));
    }
    let mut value = max;
    for (i, &b) in input[1..].iter().enumerate() {
        if i >= 4 {
            return Err(()); // past 2^28: no header needs it
        }
        value += ((b & 0x7f) as usize) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 2));
        }
    }
    Err(())
}

/// A string literal at the start of `input`, decoded into `out`; the bytes it took.
fn string(input: &[u8], out: &mut Vec<u8>) -> Result<usize, ()> {
    out.clear();
    let huffman = input.first().ok_or(())? & 0x80 != 0;
    let (len, at) = integer(input, 7)?;
    let raw = input.get(at..at + len).ok_or(())?;
    if huffman {
        unhuffman(raw, out)?;
    } else {
        out.extend_from_slice(raw);
    }
    Ok(at + len)
}

/// A dynamic table entry: name and value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// The decoder's state across a connection's header blocks: the dynamic table.
#[derive(Default)]
pub struct Decoder {
    /// Newest first (index 62).
    table: VecDeque<Entry>,
    size: usize,
    max: Option<usize>,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    fn max(&self) -> usize {
        self.max.unwrap_or(TABLE_SIZE)
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), ()> {
        match index {
            0 => Err(()),
            1..=61 => Ok(STATIC_TABLE[index - 1]),
            _ => self.table.get(index - 62).map(|(n, v)| (&n[..], &v[..])).ok_or(()),
        }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + 32;
        self.evict_to(self.max().saturating_sub(size));
        if size <= self.max() {
            self.table.push_front((name.into(), value.into()));
            self.size += size;
        }
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let (n, v) = self.table.pop_back().expect("size counts the entries");
            self.size -= n.len() + v.len() + 32;
        }
    }

    /// Decodes one complete header block, giving each field to `field` in order.
    pub fn decode(&mut self, block: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), ()> {
        let mut at = 0;
        let mut fields = 0;
        while at < block.len() {
            let rest = &block[at..];
            let b = rest[0];
            if b & 0x80 != 0 {
                let (index, n) = integer(rest, 7)?;
                let (name, value) = self.entry(index)?;
                field(name, value);
                at += n;
            } else if b & 0xe0 == 0x20 {
                // Dynamic table size update: only before the block's first field (RFC 7541 §4.2).
                let (size, n) = integer(rest, 5)?;
                if fields > 0 || size > TABLE_SIZE {
                    return Err(());
                }
                self.max = Some(size);
                self.evict_to(size);
                at += n;
                continue;
            } else {
                // Literal: with incremental indexing (01), without (0000) or never indexed (0001).
                let indexing = b & 0xc0 == 0x40;
                let (index, mut n) = integer(rest, if indexing { 6 } else { 4 })?;
                let mut name = std::mem::take(&mut self.name);
                if index == 0 {
                    n += string(&rest[n..], &mut name)?;
                } else {
                    name.clear();
                    name.extend_from_slice(self.entry(index)?.0);
                }
                let mut value = std::mem::take(&mut self.value);
                n += string(&rest[n..], &mut value)?;
                field(&name, &value);
                if indexing {
                    self.insert(&name, &value);
                }
                (self.name, self.value) = (name, value);
                at += n;
            }
            fields += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
