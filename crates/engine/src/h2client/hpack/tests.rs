//! RFC 7541 Appendix C's examples (Huffman-coded requests, and responses evicting from a
//! 256-byte table), plus the errors a malformed block must give.

use super::*;

fn fields(d: &mut Decoder, block: &[u8]) -> Vec<(String, String)> {
    let mut out = vec![];
    d.decode(block, |n, v| out.push((String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())))
        .unwrap();
    out
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

fn table(d: &Decoder) -> Vec<(String, String)> {
    d.table
        .iter()
        .map(|(n, v)| (String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap()))
        .collect()
}

#[test]
fn rfc7541_c4_requests_with_huffman() {
    let mut d = Decoder::default();
    let first = [0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
    let expected = [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")];
    assert_eq!(fields(&mut d, &first), pairs(&expected));
    let second = [0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf];
    let mut expected = expected.to_vec();
    expected.push(("cache-control", "no-cache"));
    assert_eq!(fields(&mut d, &second), pairs(&expected));
    let third = [
        0x82, 0x87, 0x85, 0xbf, 0x40, 0x88, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f, 0x89, 0x25, 0xa8, 0x49,
        0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf,
    ];
    let expected = [
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/index.html"),
        (":authority", "www.example.com"),
        ("custom-key", "custom-value"),
    ];
    assert_eq!(fields(&mut d, &third), pairs(&expected));
    assert_eq!(
        table(&d),
        pairs(&[("custom-key", "custom-value"), ("cache-control", "no-cache"), (":authority", "www.example.com")])
    );
    assert_eq!(d.size, 164);
}

#[test]
fn rfc7541_c6_responses_with_huffman_and_eviction() {
    let mut d = Decoder { max: Some(256), ..Decoder::default() };
    let first = [
        0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10,
        0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e,
        0x91, 0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
    ];
    let date = "Mon, 21 Oct 2013 20:13:21 GMT";
    let location = "https://www.example.com";
    let expected = [(":status", "302"), ("cache-control", "private"), ("date", date), ("location", location)];
    assert_eq!(fields(&mut d, &first), pairs(&expected));
    assert_eq!(d.size, 222);
    let second = [0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf];
    let expected = [(":status", "307"), ("cache-control", "private"), ("date", date), ("location", location)];
    assert_eq!(fields(&mut d, &second), pairs(&expected));
    assert_eq!(table(&d)[0], (":status".into(), "307".into()), "302 was evicted to make room");
    let third = [
        0x88, 0xc1, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b,
        0x81, 0x66, 0xe0, 0x84, 0xa6, 0x2d, 0x1b, 0xff, 0xc0, 0x5a, 0x83, 0x9b, 0xd9, 0xab, 0x77, 0xad, 0x94, 0xe7,
        0x82, 0x1d, 0xd7, 0xf2, 0xe6, 0xc7, 0xb3, 0x35, 0xdf, 0xdf, 0xcd, 0x5b, 0x39, 0x60, 0xd5, 0xaf, 0x27, 0x08,
        0x7f, 0x36, 0x72, 0xc1, 0xab, 0x27, 0x0f, 0xb5, 0x29, 0x1f, 0x95, 0x87, 0x31, 0x60, 0x65, 0xc0, 0x03, 0xed,
        0x4e, 0xe5, 0xb1, 0x06, 0x3d, 0x50, 0x07,
    ];
    let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
    let expected = [
        (":status", "200"),
        ("cache-control", "private"),
        ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
        ("location", location),
        ("content-encoding", "gzip"),
        ("set-cookie", cookie),
    ];
    assert_eq!(fields(&mut d, &third), pairs(&expected));
    assert_eq!(
        table(&d),
        pairs(&[("set-cookie", cookie), ("content-encoding", "gzip"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT")])
    );
    assert_eq!(d.size, 215);
}

#[test]
fn every_byte_survives_the_huffman_code() {
    // Encode each symbol with the canonical code built from the lengths, then decode them all.
    let h = huffman();
    let mut code_of = vec![(0u32, 0usize); 257];
    for len in 1..=30 {
        for i in 0..h.count[len] as usize {
            code_of[h.symbols[h.offset[len] + i] as usize] = (h.first[len] + i as u32, len);
        }
    }
    assert_eq!(code_of[b'0' as usize], (0, 5), "RFC 7541 Appendix B: '0' is 00000");
    assert_eq!(code_of[b' ' as usize], (0x14, 6));
    assert_eq!(code_of[EOS as usize], (0x3fff_ffff, 30));
    let (mut bits, mut n, mut out) = (0u64, 0usize, vec![]);
    for byte in 0..=255u8 {
        let (code, len) = code_of[byte as usize];
        bits = (bits << len) | u64::from(code);
        n += len;
        while n >= 8 {
            out.push((bits >> (n - 8)) as u8);
            n -= 8;
        }
    }
    if n > 0 {
        out.push(((bits << (8 - n)) as u8) | ((1u8 << (8 - n)) - 1));
    }
    let mut decoded = vec![];
    unhuffman(&out, &mut decoded).unwrap();
    assert_eq!(decoded, (0..=255u8).collect::<Vec<_>>());
}

#[test]
fn malformed_blocks_are_errors() {
    let bad: &[&[u8]] = &[
        &[0x80],                                     // index 0
        &[0xbf],                                     // index 62: the dynamic table is empty
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff],       // an integer that never ends
        &[0x3f],                                     // a size update cut short (the panic of RUSTSEC-2023-0085)
        &[0x3f, 0xe2, 0x1f],                         // a size update to 4097, past our 4096
        &[0x82, 0x20],                               // a size update after a field
        &[0x40, 0x85, b'a'],                         // a name longer than the block
        &[0x00, 0x81, 0xff, 0x00],                   // Huffman padding of 8 bits
        &[0x00, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00], // EOS inside a string
        &[0x00, 0x81, 0x00, 0x00],                   // padding that is not all ones
    ];
    for block in bad {
        assert!(Decoder::default().decode(block, |_, _| {}).is_err(), "{block:x?}");
    }
    // A size update at the start is fine, and evicts.
    let mut d = Decoder::default();
    fields(&mut d, &[0x40, 0x01, b'a', 0x01, b'b']);
    assert_eq!(d.size, 34);
    assert_eq!(fields(&mut d, &[0x20, 0x82]), pairs(&[(":method", "GET")]));
    assert_eq!((d.size, d.table.len()), (0, 0));
}
