//! Keep-alive after a refusal: a bad request with a body (a 400 for a bad path parameter or bad
//! JSON, a 415 for a body that is not JSON...), then a good one on the same connection, thousands
//! of times. The server must take the next request, or have said `Connection: close` on its
//! refusal: a connection closed silently fails the client's next request, and a client cannot
//! know whether a POST sent then was processed. A server that answers before reading the whole
//! body must read the rest or announce the close (RFC 9112 §9.6).

use crate::check::rest_request;
use anyhow::{anyhow, bail, Context, Result};
use callbench_contract::vectors::{self, Body};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Default, Clone)]
pub struct KeepAliveStats {
    pub pairs: usize,
    /// Refusals that said `Connection: close` (a new connection followed, as it should).
    pub announced: usize,
    /// Good requests that failed on a connection closed without a word, with the refusal before.
    pub silent: Vec<String>,
}

/// The bad requests that carry a body, as bytes on the wire, with a name; and a good request.
fn requests(addr: SocketAddr) -> Result<(Vec<(String, Vec<u8>)>, Vec<u8>)> {
    let mut bad = Vec::new();
    for file in vectors::all() {
        for v in file.vectors.iter().filter(|v| v.class != "ok") {
            let Some(rest) = &v.rest else { continue };
            // Oversized bodies are the flood's (a 413 may close: it says so).
            if matches!(rest.body, None | Some(Body::Fill(_))) {
                continue;
            }
            let (headers, body) = rest_request(rest)?;
            let mut head =
                format!("{} {} HTTP/1.1\r\nhost: {addr}\r\ncontent-length: {}\r\n", rest.method, rest.path, body.len());
            for (name, value) in headers.iter().filter(|(n, v)| !v.is_empty() && n != "content-length") {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let name = format!("{} {} ({}, {})", rest.method, rest.path, v.class, rest.expect.status);
            bad.push((name, [head.as_bytes(), &body].concat()));
        }
    }
    anyhow::ensure!(!bad.is_empty(), "the vectors hold no bad request with a body");
    Ok((bad, format!("GET /students HTTP/1.1\r\nhost: {addr}\r\n\r\n").into_bytes()))
}

/// `pairs` times: a bad request, then a good one on the same connection.
pub async fn bad_then_good(addr: SocketAddr, pairs: usize) -> Result<KeepAliveStats> {
    let (bad, good) = requests(addr)?;
    let mut stats = KeepAliveStats { pairs, ..KeepAliveStats::default() };
    let mut conn = Conn::open(addr).await?;
    for i in 0..pairs {
        let (name, request) = &bad[i % bad.len()];
        let refusal = conn.exchange(request).await.with_context(|| format!("{name}: no answer"))?;
        if refusal.close {
            stats.announced += 1;
            conn = Conn::open(addr).await?;
            continue;
        }
        match conn.exchange(&good).await {
            Ok(answer) if answer.status == 200 => {
                if answer.close {
                    conn = Conn::open(addr).await?;
                }
            }
            Ok(answer) => bail!("GET /students after {name}: status {}", answer.status),
            Err(e) => {
                stats.silent.push(format!("after {name} (answered {}): {e:#}", refusal.status));
                conn = Conn::open(addr).await?;
            }
        }
    }
    Ok(stats)
}

struct Answer {
    status: u16,
    /// The server said `Connection: close`, or framed the body by closing.
    close: bool,
}

struct Conn {
    tcp: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn> {
        let tcp = TcpStream::connect(addr).await.with_context(|| format!("connect to {addr}"))?;
        tcp.set_nodelay(true)?;
        Ok(Conn { tcp, buf: Vec::new() })
    }

    /// Writes `request` and reads its whole answer (Content-Length or chunked).
    async fn exchange(&mut self, request: &[u8]) -> Result<Answer> {
        self.tcp.write_all(request).await.context("the request could not be written")?;
        let (head_len, status, length, chunked, close) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut response = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(n) = response.parse(&self.buf)? {
                let value = |name: &str| {
                    response
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
                };
                let length = value("content-length").and_then(|v| v.trim().parse::<usize>().ok());
                let chunked = value("transfer-encoding").is_some_and(|v| v.contains("chunked"));
                let close = value("connection").is_some_and(|v| v.contains("close"));
                break (n, response.code.unwrap_or(0), length, chunked, close);
            }
            self.fill().await?;
        };
        self.buf.drain(..head_len);
        if chunked {
            loop {
                if let Some(end) = chunked_end(&self.buf)? {
                    self.buf.drain(..end);
                    break;
                }
                self.fill().await?;
            }
        } else if let Some(n) = length {
            while self.buf.len() < n {
                self.fill().await?;
            }
            self.buf.drain(..n);
        } else {
            return Ok(Answer { status, close: true }); // framed by the close
        }
        Ok(Answer { status, close })
    }

    async fn fill(&mut self) -> Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.tcp.read(&mut chunk).await.context("the connection failed")?;
        if n == 0 {
            return Err(anyhow!("the server closed the connection"));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

/// Where a chunked body at the start of `buf` ends, once it is all there.
fn chunked_end(buf: &[u8]) -> Result<Option<usize>> {
    let mut at = 0;
    loop {
        let Some(line) = buf[at..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let text = std::str::from_utf8(&buf[at..at + line])?;
        let size = usize::from_str_radix(text.split(';').next().unwrap_or("").trim(), 16)?;
        at += line + 2;
        if size == 0 {
            // No trailers from these servers: the empty line ends the body.
            return Ok((buf.len() >= at + 2).then_some(at + 2));
        }
        if buf.len() < at + size + 2 {
            return Ok(None);
        }
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_end_where_their_last_chunk_does() {
        assert_eq!(chunked_end(b"2\r\nok\r\n0\r\n\r\nNEXT").unwrap(), Some(12));
        assert_eq!(chunked_end(b"2\r\nok\r\n0\r\n").unwrap(), None);
        assert!(chunked_end(b"zz\r\n").is_err());
    }

    #[test]
    fn every_bad_request_with_a_body_is_sent() {
        let (bad, good) = requests("127.0.0.1:8080".parse().unwrap()).unwrap();
        assert!(
            bad.iter().any(|(name, _)| name.starts_with("PUT /auth/")),
            "{:?}",
            bad.iter().map(|b| &b.0).collect::<Vec<_>>()
        );
        for (name, request) in &bad {
            let text = String::from_utf8_lossy(request);
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(head.contains(&format!("content-length: {}", body.len())), "{name}: {head}");
        }
        assert!(good.starts_with(b"GET /students HTTP/1.1\r\n"));
    }
}
