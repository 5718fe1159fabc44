//! A chunked body (RFC 9112 §7.1) decoded as its bytes arrive: the caller drops what `feed` used,
//! so neither a long body nor a size line that never ends is ever held whole. An unfinished line is
//! searched once: a server dribbling a 64 KiB trailer byte by byte costs linear time, not quadratic.

use crate::limits::{MAX_CHUNK_LINE, MAX_TRAILERS};

#[derive(Debug, Default)]
pub struct Chunked {
    state: State,
    /// Data bytes decoded so far.
    pub data: u64,
    /// Bytes of trailer section seen so far.
    trailers: usize,
    /// How far the unfinished line at the start of the next `feed` was searched for its CRLF.
    searched: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum State {
    #[default]
    Size,
    Data(u64),
    DataEnd,
    Trailers,
    Done,
}

/// Broken framing: a bad size, a missing CRLF, a line or trailer section over the limits.
#[derive(Debug, PartialEq)]
pub struct Broken;

impl Chunked {
    /// Decodes what it can of `buf`, handing the body's data to `data`; gives how many bytes it
    /// used (the caller drops them) and whether the body ended.
    pub fn feed(&mut self, buf: &[u8], mut data: impl FnMut(&[u8])) -> Result<(usize, bool), Broken> {
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match self.state {
                State::Size => {
                    let Some(end) = self.find_line_end(rest) else {
                        return if rest.len() > MAX_CHUNK_LINE { Err(Broken) } else { Ok((at, false)) };
                    };
                    if end > MAX_CHUNK_LINE {
                        return Err(Broken);
                    }
                    let size = chunk_size(&rest[..end])?;
                    at += end + 2;
                    self.state = if size == 0 { State::Trailers } else { State::Data(size) };
                }
                State::Data(left) => {
                    let n = left.min(rest.len() as u64) as usize;
                    if n == 0 {
                        return Ok((at, false));
                    }
                    data(&rest[..n]);
                    self.data += n as u64;
                    at += n;
                    self.state = if left == n as u64 { State::DataEnd } else { State::Data(left - n as u64) };
                }
                State::DataEnd => {
                    if rest.len() < 2 {
                        return Ok((at, false));
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(Broken);
                    }
                    at += 2;
                    self.state = State::Size;
                }
                State::Trailers => {
                    let Some(end) = self.find_line_end(rest) else {
                        return if self.trailers + rest.len() > MAX_TRAILERS { Err(Broken) } else { Ok((at, false)) };
                    };
                    at += end + 2;
                    self.trailers += end + 2;
                    if self.trailers > MAX_TRAILERS {
                        return Err(Broken);
                    }
                    if end == 0 {
                        self.state = State::Done;
                    }
                }
                State::Done => return Ok((at, true)),
            }
        }
    }

    /// Where the line at the start of `rest` ends (its CRLF), searching only bytes the last call
    /// did not; when it has no end yet, remembers how far it got for the next call.
    fn find_line_end(&mut self, rest: &[u8]) -> Option<usize> {
        // The last byte searched may be the CR of a CRLF split across reads.
        let from = self.searched.saturating_sub(1).min(rest.len());
        match find_crlf(&rest[from..]) {
            Some(end) => {
                self.searched = 0;
                Some(from + end)
            }
            None => {
                self.searched = rest.len();
                None
            }
        }
    }
}

/// The size of a chunk-size line (hex digits, then extensions after `;`, which are ignored).
fn chunk_size(line: &[u8]) -> Result<u64, Broken> {
    let digits = line.split(|&b| b == b';').next().unwrap_or(line);
    let digits = std::str::from_utf8(digits).map_err(|_| Broken)?.trim_matches([' ', '\t']);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Broken);
    }
    u64::from_str_radix(digits, 16).map_err(|_| Broken)
}

fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `step` bytes, keeping the unused rest as a connection's buffer does.
    fn decode(input: &[u8], step: usize) -> Result<(Vec<u8>, usize, bool), Broken> {
        let (mut decoder, mut buf, mut out, mut used_total) = (Chunked::default(), Vec::new(), Vec::new(), 0);
        for piece in input.chunks(step.max(1)) {
            buf.extend_from_slice(piece);
            let (used, done) = decoder.feed(&buf, |d| out.extend_from_slice(d))?;
            buf.drain(..used);
            used_total += used;
            if done {
                return Ok((out, used_total, true));
            }
        }
        Ok((out, used_total, false))
    }

    #[test]
    fn complete_in_any_pieces_and_nothing_past_its_end() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        for step in 1..body.len() {
            let (out, used, done) = decode(body, step).unwrap();
            assert!(done, "step {step}");
            assert_eq!(out, b"hello world");
            assert_eq!(used, body.len() - 4, "the next answer's bytes are left: step {step}");
        }
        for cut in 0..body.len() - 4 {
            assert!(!decode(&body[..cut], 7).unwrap().2, "cut at {cut}");
        }
        assert_eq!(decode(b"0\r\n\r\n", 5).unwrap(), (vec![], 5, true));
    }

    #[test]
    fn broken_framing() {
        for bad in [&b"zz\r\n"[..], b"2\r\nabXY", b"\r\n", b"+5\r\nhello\r\n", b"-1\r\n", b"0x5\r\n"] {
            assert_eq!(decode(bad, 64), Err(Broken), "{:?}", String::from_utf8_lossy(bad));
        }
        // A size that overflows, however it is written.
        assert_eq!(decode(b"10000000000000000\r\n", 64), Err(Broken));
        let (out, _, done) = decode(b"ffffffffffffffff\r\nabc", 64).unwrap();
        assert!(!done && out == b"abc", "a huge chunk is read as it comes, held nowhere");
    }

    #[test]
    fn lines_and_trailers_that_never_end_are_refused_at_their_limits() {
        let endless_size = vec![b'1'; MAX_CHUNK_LINE + 1];
        assert_eq!(decode(&endless_size, 1000), Err(Broken));
        assert!(decode(&endless_size[..MAX_CHUNK_LINE], 1000).is_ok());
        let mut endless_trailer = b"0\r\n".to_vec();
        endless_trailer.extend(std::iter::repeat_n(b'x', MAX_TRAILERS + 1));
        assert_eq!(decode(&endless_trailer, 4096), Err(Broken));
        let mut many_trailers = b"0\r\n".to_vec();
        many_trailers.extend(std::iter::repeat_n(&b"a: b\r\n"[..], MAX_TRAILERS / 6 + 1).flatten());
        assert_eq!(decode(&many_trailers, 4096), Err(Broken));
    }

    #[test]
    fn a_long_trailer_dribbled_a_byte_at_a_time_ends_as_it_does_whole() {
        // A line searched in part keeps its place, a CRLF split across reads among them.
        let mut body = b"3\r\nabc\r\n0;".to_vec();
        body.extend(std::iter::repeat_n(b'e', MAX_CHUNK_LINE - 3));
        body.extend_from_slice(b"\r\nx: ");
        body.extend(std::iter::repeat_n(b'a', MAX_TRAILERS - 16));
        body.extend_from_slice(b"\r\ny: \r\r\n\r\nNEXT");
        for step in [1, 2, 3, 4096] {
            let (out, used, done) = decode(&body, step).unwrap();
            assert!(done && out == b"abc", "step {step}");
            assert_eq!(used, body.len() - 4, "step {step}");
        }
    }
}
