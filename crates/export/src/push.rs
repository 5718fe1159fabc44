//! Sends points to a remote-write receiver (Prometheus with `--web.enable-remote-write-receiver`,
//! Mimir, Thanos, VictoriaMetrics…): one HTTP/1.1 POST per batch of series, over TLS for https://,
//! with basic auth when the URL has `user:password@`.

use crate::point::Point;
use crate::remote_write;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// Series per request: well under receivers' default limits on a request's size.
const BATCH: usize = 1000;
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("'{0}': not an http:// or https:// URL of a remote-write receiver")]
    Url(String),
    #[error("cannot connect to {address}: {source}")]
    Connect { address: String, source: std::io::Error },
    #[error("TLS with {host}: {reason}")]
    Tls { host: String, reason: String },
    #[error("{url}: {source}")]
    Io { url: String, source: std::io::Error },
    #[error("{url} answered {status}: {body}")]
    Refused { url: String, status: u16, body: String },
    #[error("{url} answered something that is not HTTP")]
    NotHttp { url: String },
    #[error("cannot compress the request: {0}")]
    Encode(#[from] snap::Error),
}

/// A remote-write URL, checked before anything is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub path: String,
    /// `user:password` from the URL, sent as basic auth.
    pub credentials: Option<String>,
    /// The URL as given, without the credentials: for messages.
    pub shown: String,
}

impl Target {
    /// `http[s]://[user:password@]host[:port][/path]`; with no path, Prometheus's `/api/v1/write`.
    pub fn parse(url: &str) -> Result<Target, PushError> {
        let bad = || PushError::Url(url.to_string());
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(bad());
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c.to_string()), h),
            None => (None, authority),
        };
        let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']').ok_or_else(bad)?;
            let port = after.strip_prefix(':').map(|p| p.parse::<u16>().map_err(|_| bad())).transpose()?;
            (host.to_string(), port)
        } else {
            match host_port.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p.parse::<u16>().map_err(|_| bad())?)),
                None => (host_port.to_string(), None),
            }
        };
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(bad());
        }
        let port = port.unwrap_or(if tls { 443 } else { 80 });
        let path = if path.is_empty() || path == "/" { "/api/v1/write".to_string() } else { path.to_string() };
        let scheme = if tls { "https" } else { "http" };
        let shown_host = if host.contains(':') { format!("[{host}]") } else { host.clone() };
        let shown = format!("{scheme}://{shown_host}:{port}{path}");
        Ok(Target { tls, host, port, path, credentials, shown })
    }
}

/// Pushes the points, all stamped `timestamp_ms`, in batches; the first refusal stops it.
pub fn push(target: &Target, points: &[Point], timestamp_ms: i64) -> Result<(), PushError> {
    for batch in points.chunks(BATCH) {
        let body = remote_write::body(&remote_write::request(batch, timestamp_ms))?;
        post(target, &body)?;
    }
    Ok(())
}

fn post(target: &Target, body: &[u8]) -> Result<(), PushError> {
    let io = |source| PushError::Io { url: target.shown.clone(), source };
    let address = format!("{}:{}", target.host, target.port);
    let socket = address
        .to_socket_addrs()
        .map_err(|source| PushError::Connect { address: address.clone(), source })?
        .next()
        .ok_or_else(|| PushError::Connect { address: address.clone(), source: std::io::ErrorKind::NotFound.into() })?;
    let tcp = TcpStream::connect_timeout(&socket, TIMEOUT)
        .map_err(|source| PushError::Connect { address: address.clone(), source })?;
    tcp.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
    tcp.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: callbench/{}\r\nContent-Type: application/x-protobuf\r\n\
         Content-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        target.path,
        target.host,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    if let Some(credentials) = &target.credentials {
        head.push_str(&format!("Authorization: Basic {}\r\n", base64(credentials.as_bytes())));
    }
    head.push_str("\r\n");
    let answer = if target.tls {
        let mut stream = tls_stream(target, tcp)?;
        exchange(&mut stream, head.as_bytes(), body).map_err(io)?
    } else {
        let mut stream = tcp;
        exchange(&mut stream, head.as_bytes(), body).map_err(io)?
    };
    let (status, text) = parse_answer(&answer).ok_or_else(|| PushError::NotHttp { url: target.shown.clone() })?;
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(PushError::Refused { url: target.shown.clone(), status, body: text })
    }
}

fn exchange(stream: &mut (impl Read + Write), head: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    stream.write_all(head)?;
    stream.write_all(body)?;
    stream.flush()?;
    let mut answer = Vec::new();
    // The answer ends where the server closes (Connection: close); a long one is cut at 64 KiB.
    let _ = stream.take(64 * 1024).read_to_end(&mut answer).or_else(|e| match e.kind() {
        // A TLS peer that closes without close_notify still said what it had to.
        std::io::ErrorKind::UnexpectedEof if !answer.is_empty() => Ok(0),
        _ => Err(e),
    })?;
    Ok(answer)
}

fn tls_stream(
    target: &Target,
    tcp: TcpStream,
) -> Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>, PushError> {
    let tls = |reason: String| PushError::Tls { host: target.host.clone(), reason };
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(target.host.clone()).map_err(|e| tls(e.to_string()))?;
    let connection = rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| tls(e.to_string()))?;
    Ok(rustls::StreamOwned::new(connection, tcp))
}

/// The status code and the body's first line or so (chunked or not), for a refusal's message.
fn parse_answer(answer: &[u8]) -> Option<(u16, String)> {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.lines().next()?.strip_prefix("HTTP/1.")?.get(2..5)?.parse().ok()?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked { dechunk(body) } else { body.to_string() };
    let mut shown: String = body.trim().chars().take(300).collect();
    if shown.is_empty() {
        shown = "(no message)".into();
    }
    Some((status, shown.replace('\n', " ")))
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16) else { break };
        if size == 0 || after.len() < size {
            out.push_str(&after[..size.min(after.len())]);
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_receivers() {
        let t = Target::parse("http://127.0.0.1:9090").unwrap();
        assert_eq!((t.tls, t.host.as_str(), t.port, t.path.as_str()), (false, "127.0.0.1", 9090, "/api/v1/write"));
        let t = Target::parse("https://u:p@mimir.example/api/v1/push").unwrap();
        assert_eq!(
            (t.tls, t.port, t.path.as_str(), t.credentials.as_deref()),
            (true, 443, "/api/v1/push", Some("u:p"))
        );
        assert_eq!(t.shown, "https://mimir.example:443/api/v1/push", "no password in messages");
        let t = Target::parse("http://[::1]:9090/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9090));
        for bad in ["127.0.0.1:9090", "ftp://x", "http://", "http://h:port", "http://[::1:9090"] {
            assert!(matches!(Target::parse(bad), Err(PushError::Url(_))), "{bad}");
        }
    }

    #[test]
    fn answers_and_their_messages() {
        assert_eq!(parse_answer(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap().0, 204);
        let refused = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\n\r\nout of order";
        assert_eq!(parse_answer(refused).unwrap(), (400, "out of order".into()));
        let chunked = b"HTTP/1.1 500 X\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked).unwrap(), (500, "hello world".into()));
        assert!(parse_answer(b"SSH-2.0-OpenSSH\r\n").is_none());
    }

    #[test]
    fn basic_auth_is_base64() {
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }
}
