//! HTTP/2 frames (RFC 9113 §4, §6): the 9-byte header, the frames a client writes, and the
//! parsing of the frames it reads. Only what a client needs; payloads are borrowed, not copied.

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const HEADER_LEN: usize = 9;
/// The largest frame payload a peer may send before it learns our SETTINGS_MAX_FRAME_SIZE.
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
pub const DEFAULT_WINDOW: u32 = 65_535;
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
pub const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// Error codes (RFC 9113 §7).
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const STREAM_CLOSED: u32 = 0x5;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
/// The server did not process the stream: it may be retried (RFC 9113 §8.7).
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;
/// The peer floods us (RFC 9113 §7).
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// A frame's 9-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub len: u32,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    pub fn parse(b: &[u8]) -> Head {
        Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_WINDOW,
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Appends a frame header.
pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = len as u32;
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame with `(identifier, value)` pairs.
pub fn put_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    put_head(out, settings.len() * 6, SETTINGS, 0, 0);
    for (id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, SETTINGS, ACK, 0);
}

pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub fn put_ping_ack(out: &mut Vec<u8>, data: &[u8]) {
    put_head(out, 8, PING, ACK, 0);
    out.extend_from_slice(data);
}

pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_head(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_head(out, 8, GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a header block as HEADERS plus as many CONTINUATION frames as `max_frame` needs.
pub fn put_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let mut chunks = block.chunks(max_frame.max(1)).peekable();
    let first = chunks.next().unwrap_or(&[]);
    let mut flags = if end_stream { END_STREAM } else { 0 };
    if chunks.peek().is_none() {
        flags |= END_HEADERS;
    }
    put_head(out, first.len(), HEADERS, flags, stream);
    out.extend_from_slice(first);
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_none() { END_HEADERS } else { 0 };
        put_head(out, chunk.len(), CONTINUATION, flags, stream);
        out.extend_from_slice(chunk);
    }
}

pub fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    put_head(out, data.len(), DATA, if end_stream { END_STREAM } else { 0 }, stream);
    out.extend_from_slice(data);
}

/// A frame's payload without its padding (PADDED flag), and without the 5 priority bytes of a
/// HEADERS frame (PRIORITY flag). None when the lengths do not add up (a protocol error).
pub fn unpadded<'a>(head: &Head, payload: &'a [u8]) -> Option<&'a [u8]> {
    let mut body = payload;
    let mut pad = 0usize;
    if head.has(PADDED) {
        pad = *body.first()? as usize;
        body = &body[1..];
    }
    if head.kind == HEADERS && head.has(PRIORITY_FLAG) {
        body = body.get(5..)?;
    }
    body.get(..body.len().checked_sub(pad)?)
}

/// The `(identifier, value)` pairs of a SETTINGS payload; None if its length is not a multiple of 6.
pub fn settings(payload: &[u8]) -> Option<impl Iterator<Item = (u16, u32)> + '_> {
    payload.len().is_multiple_of(6).then(|| {
        payload
            .chunks_exact(6)
            .map(|s| (u16::from_be_bytes([s[0], s[1]]), u32::from_be_bytes([s[2], s[3], s[4], s[5]])))
    })
}

/// Keeps, of the whole frames in `out` (after the connection preface, if it is still there), the
/// ones `keep` says: what is not written yet can still be taken back.
pub fn retain_frames(out: &mut Vec<u8>, keep: impl Fn(&Head) -> bool) {
    let mut read = if out.starts_with(PREFACE) { PREFACE.len() } else { 0 };
    let mut write = read;
    while read + HEADER_LEN <= out.len() {
        let head = Head::parse(&out[read..]);
        let end = (read + HEADER_LEN + head.len as usize).min(out.len());
        if keep(&head) {
            out.copy_within(read..end, write);
            write += end - read;
        }
        read = end;
    }
    out.truncate(write);
}

/// A 4-byte big-endian word at the start of a payload (RST_STREAM's code, WINDOW_UPDATE's increment).
pub fn word(payload: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(payload.get(..4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_round_trip() {
        let mut out = vec![];
        put_head(&mut out, 70_000, DATA, END_STREAM, 0x8000_0003);
        assert_eq!(out.len(), HEADER_LEN);
        let head = Head::parse(&out);
        // The reserved bit is ignored on reading.
        assert_eq!(head, Head { len: 70_000, kind: DATA, flags: END_STREAM, stream: 3 });
        assert!(head.has(END_STREAM) && !head.has(PADDED));
    }

    #[test]
    fn a_long_header_block_continues() {
        let block: Vec<u8> = (0..25u8).collect();
        let mut out = vec![];
        put_headers(&mut out, 5, &block, true, 10);
        let mut at = 0;
        let mut frames = vec![];
        while at < out.len() {
            let head = Head::parse(&out[at..]);
            frames.push((head.kind, head.flags, head.len));
            at += HEADER_LEN + head.len as usize;
        }
        assert_eq!(
            frames,
            [(HEADERS, END_STREAM, 10), (CONTINUATION, 0, 10), (CONTINUATION, END_HEADERS, 5)],
            "END_STREAM on HEADERS, END_HEADERS on the last"
        );
        let mut out = vec![];
        put_headers(&mut out, 1, b"abc", false, 16_384);
        assert_eq!(Head::parse(&out), Head { len: 3, kind: HEADERS, flags: END_HEADERS, stream: 1 });
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        let head = |kind, flags| Head { len: 0, kind, flags, stream: 1 };
        assert_eq!(unpadded(&head(DATA, PADDED), &[2, b'h', b'i', 0, 0]), Some(&b"hi"[..]));
        assert_eq!(unpadded(&head(DATA, 0), b"hi"), Some(&b"hi"[..]));
        assert_eq!(unpadded(&head(HEADERS, PRIORITY_FLAG), &[0, 0, 0, 1, 16, 0x88]), Some(&[0x88][..]));
        assert_eq!(unpadded(&head(HEADERS, PRIORITY_FLAG | PADDED), &[1, 0, 0, 0, 1, 16, 0x88, 0]), Some(&[0x88][..]));
        assert_eq!(unpadded(&head(DATA, PADDED), &[9, b'h']), None, "more padding than payload");
        assert_eq!(unpadded(&head(DATA, PADDED), &[]), None);
        assert_eq!(unpadded(&head(HEADERS, PRIORITY_FLAG), &[0, 0]), None);
    }

    #[test]
    fn frames_not_yet_written_can_be_taken_back() {
        let mut out = PREFACE.to_vec();
        put_settings(&mut out, &[]);
        for stream in [1, 3, 5] {
            put_headers(&mut out, stream, &[0x88; 30], false, 16);
            put_data(&mut out, stream, b"body", true);
        }
        put_window_update(&mut out, 0, 100);
        retain_frames(&mut out, |head| head.stream <= 3);
        assert!(out.starts_with(PREFACE));
        let mut at = PREFACE.len();
        let mut seen = vec![];
        while at < out.len() {
            let head = Head::parse(&out[at..]);
            seen.push((head.kind, head.stream));
            at += HEADER_LEN + head.len as usize;
        }
        assert_eq!(at, out.len());
        let kept = [(SETTINGS, 0), (HEADERS, 1), (CONTINUATION, 1), (DATA, 1), (HEADERS, 3), (CONTINUATION, 3)];
        assert_eq!(seen, [&kept[..], &[(DATA, 3), (WINDOW_UPDATE, 0)]].concat());
    }

    #[test]
    fn settings_are_pairs() {
        let mut out = vec![];
        put_settings(&mut out, &[(SETTINGS_ENABLE_PUSH, 0), (SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)]);
        let pairs: Vec<_> = settings(&out[HEADER_LEN..]).unwrap().collect();
        assert_eq!(pairs, [(SETTINGS_ENABLE_PUSH, 0), (SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)]);
        assert!(settings(&[0; 5]).is_none());
        assert_eq!(word(&[0, 0, 1, 0]), Some(256));
        assert_eq!(word(&[0, 0]), None);
    }
}
