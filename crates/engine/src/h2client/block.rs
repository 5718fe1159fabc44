//! Request header blocks, HPACK-encoded once per target (RFC 7541), in the three forms a
//! connection needs: the first request adds its fields to the server's dynamic table ("literal
//! with incremental indexing"), later requests name them by index (a few bytes, as grpc-go, h2 and
//! nghttp2 clients send), and a table-free form for a server whose table cannot hold them.
//! Answers are decoded by [`super::hpack`].

use std::sync::atomic::{AtomicU64, Ordering};

/// The HPACK static table's entries a request uses (RFC 7541 Appendix A).
const AUTHORITY: usize = 1;
const METHOD_GET: u8 = 0x80 | 2;
const METHOD_POST: u8 = 0x80 | 3;
const METHOD: usize = 2;
const PATH: usize = 4;
const SCHEME_HTTP: u8 = 0x80 | 6;
const SCHEME_HTTPS: u8 = 0x80 | 7;

/// The dynamic table's size before the server's SETTINGS say otherwise (RFC 7541 §4.2).
pub const DEFAULT_TABLE_SIZE: u32 = 4096;

/// Appends `value` as an HPACK integer with a `prefix`-bit prefix; `first` holds the bits above it.
fn put_int(out: &mut Vec<u8>, first: u8, prefix: u8, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A string literal without Huffman coding.
fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// A field's name: a static-table index or the name itself.
enum Name<'a> {
    Static(usize),
    New(&'a [u8]),
}

impl Name<'_> {
    fn len(&self) -> usize {
        match self {
            Name::Static(AUTHORITY) => ":authority".len(),
            Name::Static(PATH) => ":path".len(),
            Name::Static(_) => ":method".len(),
            Name::New(n) => n.len(),
        }
    }
}

/// Appends a literal field: with incremental indexing (6-bit prefix, 0x40) or without (4-bit, 0x00).
fn put_literal(out: &mut Vec<u8>, name: &Name, value: &[u8], index: bool) {
    let (first, prefix) = if index { (0x40, 6) } else { (0x00, 4) };
    match name {
        Name::Static(i) => put_int(out, first, prefix, *i),
        Name::New(n) => {
            out.push(first);
            put_str(out, n);
        }
    }
    put_str(out, value);
}

/// Appends a dynamic table size update (RFC 7541 §6.3).
pub fn put_table_size(out: &mut Vec<u8>, size: u32) {
    put_int(out, 0x20, 5, size as usize);
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2); `te` is allowed with the value `trailers` only.
fn connection_specific(name: &str, value: &str) -> bool {
    matches!(name, "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade" | "host")
        || (name == "te" && !value.eq_ignore_ascii_case("trailers"))
}

/// One request's header block in its three forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestBlocks {
    /// Tells requests apart: a connection indexes the fields of one of them only.
    pub id: u64,
    /// Adds the indexed fields to the server's table (the first request on a connection).
    pub first: Vec<u8>,
    /// Names those fields by index (every later request).
    pub repeat: Vec<u8>,
    /// Uses no dynamic table at all.
    pub literal: Vec<u8>,
    /// The table space the indexed fields take (RFC 7541 §4.1: name + value + 32 each).
    pub table_size: u32,
    /// A HEAD request: its answer's `content-length` describes a body that is not sent.
    pub head_request: bool,
}

/// The header blocks of a request: pseudo-headers first, then `headers` (names lowercased;
/// `Host` and connection-specific headers left out, HTTP/2 forbids them).
pub fn request_block(
    method: &str,
    https: bool,
    authority: &str,
    path: &str,
    headers: &[(String, String)],
) -> RequestBlocks {
    // Fields from the static table, whole (`Err`), or to send as literals (`Ok`), in order.
    let mut fields: Vec<Result<(Name, &[u8]), u8>> = vec![];
    fields.push(match method {
        "GET" => Err(METHOD_GET),
        "POST" => Err(METHOD_POST),
        other => Ok((Name::Static(METHOD), other.as_bytes())),
    });
    fields.push(Err(if https { SCHEME_HTTPS } else { SCHEME_HTTP }));
    fields.push(Ok((Name::Static(AUTHORITY), authority.as_bytes())));
    fields.push(Ok((Name::Static(PATH), path.as_bytes())));
    let lowered: Vec<(String, &str)> = headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.as_str()))
        .filter(|(n, v)| !connection_specific(n, v))
        .collect();
    for (name, value) in &lowered {
        fields.push(Ok((Name::New(name.as_bytes()), value.as_bytes())));
    }
    // Index the literal fields, in order, while they fit the default table; the rest stay literal.
    let mut table_size = 0u32;
    let mut indexed = 0;
    for (name, value) in fields.iter().flatten() {
        let size = (name.len() + value.len() + 32) as u32;
        if table_size + size > DEFAULT_TABLE_SIZE {
            break;
        }
        table_size += size;
        indexed += 1;
    }
    let (mut first, mut repeat, mut literal) = (vec![], vec![], vec![]);
    let mut i = 0;
    for field in &fields {
        let (name, value) = match field {
            Err(whole) => {
                for out in [&mut first, &mut repeat, &mut literal] {
                    out.push(*whole);
                }
                continue;
            }
            Ok(field) => field,
        };
        put_literal(&mut literal, name, value, false);
        if i < indexed {
            put_literal(&mut first, name, value, true);
            // The latest entry is 62; each one added after this field pushes it one further.
            put_int(&mut repeat, 0x80, 7, 62 + (indexed - 1 - i));
        } else {
            put_literal(&mut first, name, value, false);
            put_literal(&mut repeat, name, value, false);
        }
        i += 1;
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let head_request = method == "HEAD";
    RequestBlocks { id: NEXT.fetch_add(1, Ordering::Relaxed), first, repeat, literal, table_size, head_request }
}

/// Encodes a request's header blocks and decodes each form with the engine's own decoder, as a
/// server reads them: `first` then `repeat` on one connection, `literal` alone. Each must give the
/// request's fields, in order (names lowercased, connection-specific ones left out). For the
/// property test below and the fuzz target.
#[cfg(any(test, feature = "fuzzing"))]
pub fn check_round_trip(method: &str, https: bool, authority: &str, path: &str, headers: &[(String, String)]) {
    use super::hpack::{Decoder, TABLE_SIZE};
    let blocks = request_block(method, https, authority, path, headers);
    let scheme = if https { "https" } else { "http" };
    let mut expected: Vec<(Vec<u8>, Vec<u8>)> =
        [(":method", method), (":scheme", scheme), (":authority", authority), (":path", path)]
            .iter()
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        if !connection_specific(&name, value) {
            expected.push((name.into_bytes(), value.as_bytes().to_vec()));
        }
    }
    let decode = |decoder: &mut Decoder, block: &[u8]| {
        let mut fields = Vec::new();
        decoder.decode(block, |n, v| fields.push((n.to_vec(), v.to_vec()))).expect("our own block decodes");
        fields
    };
    let mut decoder = Decoder::default();
    assert_eq!(decode(&mut decoder, &blocks.first), expected, "first");
    for _ in 0..2 {
        assert_eq!(decode(&mut decoder, &blocks.repeat), expected, "repeat");
    }
    assert_eq!(decode(&mut Decoder::default(), &blocks.literal), expected, "literal");
    assert!(blocks.table_size as usize <= TABLE_SIZE);
}

/// What each field adds to a header list's size besides its name and value (RFC 9113 §6.5.2).
pub const FIELD_OVERHEAD: usize = 32;

/// Decoded header fields of one block, in one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderList {
    bytes: Vec<u8>,
    /// (name start, value start, value end) in `bytes`: 12 bytes a field, less than the 32 a
    /// header list's size counts for it (lists are far below 4 GiB).
    spans: Vec<(u32, u32, u32)>,
}

impl HeaderList {
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        self.spans.push((start, start + name.len() as u32, self.bytes.len() as u32));
    }

    /// The first value of `name` (lowercase, as HTTP/2 sends names).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter().find(|(n, _)| *n == name.as_bytes()).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.spans.iter().map(|&(n, v, e)| (&self.bytes[n as usize..v as usize], &self.bytes[v as usize..e as usize]))
    }

    /// The list's size as RFC 9113 §6.5.2 counts it, what limits a header list: names and values
    /// plus 32 bytes per field, more than each field costs here, so that a block of many tiny
    /// fields cannot hold more memory than its size says.
    pub fn size(&self) -> usize {
        self.bytes.len() + FIELD_OVERHEAD * self.spans.len()
    }

    /// `:status` as a number.
    pub fn status(&self) -> Option<u16> {
        std::str::from_utf8(self.get(":status")?).ok()?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers() -> Vec<(String, String)> {
        vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("x-long".to_string(), "x".repeat(300)), // lengths past the 7-bit prefix
            ("Connection".to_string(), "keep-alive".to_string()),
            ("te".to_string(), "trailers".to_string()),
            ("Host".to_string(), "elsewhere".to_string()),
        ]
    }

    fn expected() -> Vec<(String, String)> {
        [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:8080"),
            (":path", "/students"),
            ("content-type", "application/json"),
            ("x-long", &"x".repeat(300)),
            ("te", "trailers"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
    }

    fn decode(decoder: &mut loona_hpack::Decoder, block: &[u8]) -> Vec<(String, String)> {
        let mut out = vec![];
        decoder
            .decode_with_cb(block, |n, v| {
                out.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()))
            })
            .unwrap();
        out
    }

    #[test]
    fn a_standard_decoder_reads_every_form_in_sequence() {
        let blocks = request_block("POST", false, "127.0.0.1:8080", "/students", &headers());
        let mut decoder = loona_hpack::Decoder::new();
        assert_eq!(decode(&mut decoder, &blocks.first), expected());
        for _ in 0..3 {
            assert_eq!(decode(&mut decoder, &blocks.repeat), expected());
        }
        assert_eq!(decode(&mut decoder, &blocks.literal), expected());
        assert_eq!(decode(&mut loona_hpack::Decoder::new(), &blocks.literal), expected());
        assert_eq!(blocks.repeat, [0x83, 0x86, 0x80 | 66, 0x80 | 65, 0x80 | 64, 0x80 | 63, 0x80 | 62]);
        assert_eq!(blocks.table_size, (10 + 14 + 32) + (5 + 9 + 32) + (12 + 16 + 32) + (6 + 300 + 32) + (2 + 8 + 32));
        let other = request_block("PATCH", true, "localhost", "/a?b=c", &[]);
        let fields = decode(&mut loona_hpack::Decoder::new(), &other.first);
        assert_eq!(fields[..2], [(":method".into(), "PATCH".into()), (":scheme".into(), "https".into())]);
    }

    #[test]
    fn fields_past_the_default_table_stay_literal() {
        let big = vec![("x-a".to_string(), "a".repeat(3000)), ("x-b".to_string(), "b".repeat(3000))];
        let blocks = request_block("GET", false, "h", "/", &big);
        assert!(blocks.table_size <= DEFAULT_TABLE_SIZE);
        let mut decoder = loona_hpack::Decoder::new();
        let first = decode(&mut decoder, &blocks.first);
        assert_eq!(decode(&mut decoder, &blocks.repeat), first);
        assert_eq!(first.last().unwrap().1, "b".repeat(3000));
    }

    #[test]
    fn integers_past_their_prefix_and_table_size_updates() {
        // RFC 7541 C.1.2: 1337 with a 5-bit prefix.
        let mut out = vec![];
        put_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [31, 154, 10]);
        let mut out = vec![];
        put_table_size(&mut out, 0);
        out.extend_from_slice(&request_block("GET", false, "h", "/", &[]).literal);
        let mut decoder = loona_hpack::Decoder::new();
        assert_eq!(decode(&mut decoder, &out).len(), 4);
    }

    #[test]
    fn header_lists_find_values() {
        let mut list = HeaderList::default();
        list.push(b":status", b"200");
        list.push(b"grpc-status", b"0");
        list.push(b"grpc-status", b"5");
        assert_eq!(list.status(), Some(200));
        assert_eq!(list.get("grpc-status"), Some(&b"0"[..]));
        assert_eq!(list.get("missing"), None);
        assert_eq!(list.iter().count(), 3);
        assert_eq!(list.size(), 7 + 3 + 11 + 1 + 11 + 1 + 3 * FIELD_OVERHEAD);
    }

    proptest::proptest! {
        /// Any request's fields come back from each of its blocks, through our decoder and an
        /// independent one: names and values of any length (past the table and the integer
        /// prefixes), any bytes in values, headers HTTP/2 forbids among them.
        #[test]
        fn any_request_round_trips(
            method in "GET|POST|[A-Z]{1,12}",
            https: bool,
            authority in "\\PC{0,60}",
            path in "/\\PC{0,400}",
            headers in proptest::collection::vec(
                ("[A-Za-z0-9-]{1,40}|Connection|Host|TE|upgrade", "\\PC{0,200}|trailers|[a-z]{2000,3000}"),
                0..12,
            ),
        ) {
            check_round_trip(&method, https, &authority, &path, &headers);
            let blocks = request_block(&method, https, &authority, &path, &headers);
            let mut standard = loona_hpack::Decoder::new();
            let fields = |d: &mut loona_hpack::Decoder, b: &[u8]| {
                let mut out = vec![];
                d.decode_with_cb(b, |n, v| out.push((n.to_vec(), v.to_vec()))).unwrap();
                out
            };
            let first = fields(&mut standard, &blocks.first);
            proptest::prop_assert_eq!(&fields(&mut standard, &blocks.repeat), &first);
            proptest::prop_assert_eq!(&fields(&mut loona_hpack::Decoder::new(), &blocks.literal), &first);
            proptest::prop_assert_eq!(first.len(), 4 + headers.iter().filter(|(n, v)| !connection_specific(&n.to_ascii_lowercase(), v)).count());
        }
    }
}
