//! What an HTTP call sends and what counts as a good answer, shared by HTTP/1.1 and HTTP/2.

use crate::record::ErrorKind;
use bytes::Bytes;
use std::io::Write;

#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub method: String,
    /// Path and query, e.g. `/students?page=1`.
    pub path: String,
    /// User headers, in order (`-H`); names as given.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// Send the body gzip-compressed and ask for gzip answers.
    pub gzip: bool,
}

impl HttpRequest {
    pub fn get(path: &str) -> Self {
        HttpRequest { method: "GET".into(), path: path.into(), headers: Vec::new(), body: Bytes::new(), gzip: false }
    }

    pub fn has_header(&self, name: &str) -> bool {
        self.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The `:authority` of an HTTP/2 or HTTP/3 request: the user's `Host` header when given (as
    /// curl does), else `target`'s `host:port`.
    pub fn authority(&self, target: String) -> String {
        authority(&self.headers, target)
    }

    /// The body as sent: compressed once here, not per call.
    pub fn wire_body(&self) -> Bytes {
        if self.gzip && !self.body.is_empty() {
            gzip(&self.body).into()
        } else {
            self.body.clone()
        }
    }

    /// Headers callbench adds unless the user gave them: a JSON content type for bodies, and the
    /// compression headers.
    pub fn implied_headers(&self) -> Vec<(&'static str, &'static str)> {
        let mut implied = Vec::new();
        if !self.body.is_empty() && !self.has_header("content-type") {
            implied.push(("content-type", "application/json"));
        }
        if self.gzip {
            if !self.has_header("accept-encoding") {
                implied.push(("accept-encoding", "gzip"));
            }
            if !self.body.is_empty() && !self.has_header("content-encoding") {
                implied.push(("content-encoding", "gzip"));
            }
        }
        implied
    }
}

/// The `:authority` for `headers` (HTTP, or a gRPC call's metadata): their `Host` when given, else `target`.
pub fn authority(headers: &[(String, String)], target: String) -> String {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")).map_or(target, |(_, v)| v.clone())
}

/// Judges an answer's body (after undoing gzip) or message (uncompressed protobuf).
pub type BodyCheck = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// What a successful call answers.
#[derive(Default)]
pub struct Expect {
    /// Accepted statuses; empty means any 2xx.
    pub status: Vec<u16>,
    /// Checks the body, if set.
    pub body: Option<BodyCheck>,
}

impl Expect {
    pub fn status_ok(&self, status: u16) -> bool {
        if self.status.is_empty() {
            (200..300).contains(&status)
        } else {
            self.status.contains(&status)
        }
    }

    /// The body check of an answer's kept `body`, inflated first when it says gzip: how the call
    /// fails, or None when it passes (or nothing checks bodies).
    pub fn judge_body(&self, body: Vec<u8>, gzip: bool) -> Option<ErrorKind> {
        let check = self.body.as_ref()?;
        match if gzip { gunzip(&body) } else { Ok(body) } {
            Ok(body) if check(&body) => None,
            Ok(_) => Some(ErrorKind::Validation),
            Err(e) => Some(e.error_kind()),
        }
    }
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// Why an answer could not be inflated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inflate {
    /// Not valid gzip: the answer fails its check.
    Corrupt,
    /// It inflates beyond `limits::MAX_KEPT_BODY` (a gzip bomb): the answer breaks a limit.
    TooLarge,
}

impl Inflate {
    /// How a call whose answer could not be inflated fails.
    pub fn error_kind(self) -> ErrorKind {
        match self {
            Inflate::Corrupt => ErrorKind::Validation,
            Inflate::TooLarge => ErrorKind::Protocol,
        }
    }
}

/// Undoes gzip, reading at most `limits::MAX_KEPT_BODY` bytes of its output: 1 MiB of gzip can
/// hold 1 GiB of zeros.
pub fn gunzip(data: &[u8]) -> Result<Vec<u8>, Inflate> {
    gunzip_at_most(data, crate::limits::MAX_KEPT_BODY)
}

fn gunzip_at_most(data: &[u8], limit: usize) -> Result<Vec<u8>, Inflate> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut inflated = flate2::read::GzDecoder::new(data).take(limit as u64 + 1);
    inflated.read_to_end(&mut out).map_err(|_| Inflate::Corrupt)?;
    if out.len() > limit {
        return Err(Inflate::TooLarge);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_header_is_the_authority() {
        let mut r = HttpRequest::get("/");
        assert_eq!(r.authority("127.0.0.1:8080".into()), "127.0.0.1:8080");
        r.headers.push(("HOST".into(), "api.example.test".into()));
        assert_eq!(r.authority("127.0.0.1:8080".into()), "api.example.test");
    }

    #[test]
    fn gzip_round_trip_and_implied_headers() {
        let mut r = HttpRequest::get("/");
        r.method = "POST".into();
        r.body = Bytes::from_static(br#"{"a": 1}"#);
        assert_eq!(r.implied_headers(), vec![("content-type", "application/json")]);
        r.gzip = true;
        assert_eq!(gunzip(&r.wire_body()).unwrap(), r.body);
        assert_eq!(r.implied_headers().len(), 3);
        r.headers.push(("Content-Type".into(), "text/plain".into()));
        assert!(!r.implied_headers().contains(&("content-type", "application/json")));
        assert_eq!(gunzip(b"not gzip"), Err(Inflate::Corrupt));
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        // 64 KiB of zeros compress to about 100 bytes; a limit below them refuses the rest.
        let bomb = gzip(&vec![0u8; 64 * 1024]);
        assert!(bomb.len() < 1024, "{}", bomb.len());
        assert_eq!(gunzip_at_most(&bomb, 64 * 1024).unwrap().len(), 64 * 1024);
        assert_eq!(gunzip_at_most(&bomb, 64 * 1024 - 1), Err(Inflate::TooLarge));
        assert_eq!(Inflate::TooLarge.error_kind(), ErrorKind::Protocol);
        assert_eq!(Inflate::Corrupt.error_kind(), ErrorKind::Validation);
    }

    #[test]
    fn default_expectation_is_2xx() {
        let e = Expect::default();
        assert!(e.status_ok(200) && e.status_ok(204) && !e.status_ok(404) && !e.status_ok(301));
        let e = Expect { status: vec![404], body: None };
        assert!(e.body.is_none());
        assert!(e.status_ok(404) && !e.status_ok(200));
    }
}
