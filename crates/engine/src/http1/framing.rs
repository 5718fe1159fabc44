//! How an answer's head says its body ends (RFC 9112 §6.3), read strictly: Content-Length and
//! Transfer-Encoding at odds are how answers are split and smuggled, so they fail the answer
//! rather than have one of them win.

use crate::record::ErrorKind;

/// How the answer's body is delimited.
#[derive(Debug, PartialEq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// The framing fields of one head, gathered as its lines are read.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    length: Option<u64>,
    /// None without Transfer-Encoding; else whether its final coding is `chunked`. Repeated lines
    /// make one list (RFC 9110 §5.3), so the last coding of the last line that has one is final.
    chunked_last: Option<bool>,
}

impl Fields {
    /// A Content-Length line: digits, or the same digits repeated as a list (RFC 9110 §8.6). A
    /// value that differs from another, in the line or an earlier one, is an unrecoverable error
    /// (RFC 9112 §6.3).
    pub fn content_length(&mut self, value: &str) -> Result<(), ErrorKind> {
        for item in value.split(',').map(|item| item.trim_matches([' ', '\t'])) {
            if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ErrorKind::Protocol);
            }
            let n = item.parse::<u64>().map_err(|_| ErrorKind::Protocol)?;
            if self.length.is_some_and(|seen| seen != n) {
                return Err(ErrorKind::Protocol);
            }
            self.length = Some(n);
        }
        Ok(())
    }

    /// A Transfer-Encoding line: a list of codings, compared without case (RFC 9110 §10.1.4).
    pub fn transfer_encoding(&mut self, value: &str) {
        let mut chunked_last = self.chunked_last.unwrap_or(false);
        for coding in value.split(',').map(|coding| coding.trim_matches([' ', '\t'])).filter(|c| !c.is_empty()) {
            chunked_last = coding.eq_ignore_ascii_case("chunked");
        }
        self.chunked_last = Some(chunked_last);
    }

    /// The framing the fields give a body (RFC 9112 §6.3): Transfer-Encoding beside a
    /// Content-Length fails (a sender must never send both, §6.2); a final coding that is not
    /// `chunked` runs to the close; no field at all too.
    pub fn framing(&self) -> Result<Framing, ErrorKind> {
        Ok(match (self.chunked_last, self.length) {
            (Some(_), Some(_)) => return Err(ErrorKind::Protocol),
            (Some(true), None) => Framing::Chunked,
            (Some(false), None) | (None, None) => Framing::UntilClose,
            (None, Some(n)) => Framing::Length(n),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The framing of a head with these (name, value) lines.
    fn framing(lines: &[(&str, &str)]) -> Result<Framing, ErrorKind> {
        let mut fields = Fields::default();
        for (name, value) in lines {
            match *name {
                "cl" => fields.content_length(value)?,
                _ => fields.transfer_encoding(value),
            }
        }
        fields.framing()
    }

    #[test]
    fn content_lengths_agree_or_fail() {
        assert_eq!(framing(&[("cl", "5")]), Ok(Framing::Length(5)));
        assert_eq!(framing(&[("cl", "5"), ("cl", "5")]), Ok(Framing::Length(5)));
        assert_eq!(framing(&[("cl", "5, 5"), ("cl", "5")]), Ok(Framing::Length(5)));
        assert_eq!(framing(&[("cl", "0")]), Ok(Framing::Length(0)));
        for bad in [&[("cl", "2"), ("cl", "5")][..], &[("cl", "5"), ("cl", "2")], &[("cl", "2, 5")], &[("cl", "5,")]] {
            assert_eq!(framing(bad), Err(ErrorKind::Protocol), "{bad:?}");
        }
        for bad in ["", "+5", "-1", "5 5", "0x5", "18446744073709551616", "5;x"] {
            assert_eq!(framing(&[("cl", bad)]), Err(ErrorKind::Protocol), "{bad:?}");
        }
    }

    #[test]
    fn only_a_final_chunked_coding_is_chunked() {
        for chunked in ["chunked", "CHUNKED", "gzip, chunked", "gzip,chunked,", " chunked "] {
            assert_eq!(framing(&[("te", chunked)]), Ok(Framing::Chunked), "{chunked:?}");
        }
        assert_eq!(framing(&[("te", "gzip"), ("te", "chunked")]), Ok(Framing::Chunked));
        assert_eq!(framing(&[("te", "chunked"), ("te", "")]), Ok(Framing::Chunked));
        for other in ["xchunked", "chunkedx", "chunked, gzip", "gzip", "", "chunked;q=1"] {
            assert_eq!(framing(&[("te", other)]), Ok(Framing::UntilClose), "{other:?}");
        }
        assert_eq!(framing(&[("te", "chunked"), ("te", "gzip")]), Ok(Framing::UntilClose));
        assert_eq!(framing(&[]), Ok(Framing::UntilClose));
    }

    #[test]
    fn transfer_encoding_beside_a_content_length_fails() {
        for te in ["chunked", "gzip", "xchunked"] {
            assert_eq!(framing(&[("te", te), ("cl", "5")]), Err(ErrorKind::Protocol), "{te:?}");
            assert_eq!(framing(&[("cl", "5"), ("te", te)]), Err(ErrorKind::Protocol), "{te:?}");
        }
    }
}
