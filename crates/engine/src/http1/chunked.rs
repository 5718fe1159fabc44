//! Finding the end of a chunked body (RFC 9112 §7.1) in what has been read so far.

/// Where a chunked body starting at `buf[0]` ends, and how many data bytes it holds; `Ok(None)` if
/// more bytes are needed, `Err` on broken framing. `decoded`, if given, receives the data.
pub fn scan(buf: &[u8], mut decoded: Option<&mut Vec<u8>>) -> Result<Option<(usize, u64)>, ()> {
    let mut at = 0;
    let mut data = 0u64;
    loop {
        let Some(line_end) = find_crlf(&buf[at..]) else { return Ok(None) };
        let line = &buf[at..at + line_end];
        let size_text = line.split(|&b| b == b';').next().unwrap_or(line); // chunk extensions ignored
        let size_text = std::str::from_utf8(size_text).map_err(drop)?.trim();
        let size = usize::from_str_radix(size_text, 16).map_err(drop)?;
        at += line_end + 2;
        if size == 0 {
            // Trailer fields, then an empty line.
            loop {
                let Some(end) = find_crlf(&buf[at..]) else { return Ok(None) };
                at += end + 2;
                if end == 0 {
                    return Ok(Some((at, data)));
                }
            }
        }
        if buf.len() < at + size + 2 {
            return Ok(None);
        }
        if &buf[at + size..at + size + 2] != b"\r\n" {
            return Err(());
        }
        if let Some(out) = decoded.as_deref_mut() {
            out.extend_from_slice(&buf[at..at + size]);
        }
        data += size as u64;
        at += size + 2;
    }
}

fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn complete_partial_and_broken() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let mut out = Vec::new();
        assert_eq!(scan(body, Some(&mut out)), Ok(Some((body.len() - 4, 11))));
        assert_eq!(out, b"hello world");
        for cut in 0..body.len() - 4 {
            assert_eq!(scan(&body[..cut], None), Ok(None), "cut at {cut}");
        }
        assert_eq!(scan(b"zz\r\n", None), Err(()));
        assert_eq!(scan(b"2\r\nabXY", None), Err(()));
        assert_eq!(scan(b"0\r\n\r\n", None), Ok(Some((5, 0))));
    }
}
