//! Keep-alive after a refusal: a bad request with a body (a 400 for a bad path parameter or bad
//! JSON, a 415 for a body that is not JSON...), then a good one on the same connection, thousands
//! of times, over a few connections at once. The server must take the next request, or have said
//! `Connection: close` on its refusal: a connection closed silently fails the client's next
//! request, and a client cannot know whether a POST sent then was processed. A server that answers
//! before reading the whole body must read the rest or announce the close (RFC 9112 §9.6).

use crate::check::rest_request;
use crate::error::{because, chain};
use crate::flood::RARE_EVERY;
use crate::VerifyError::{self, BadInput, Contract, Unreachable};
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

/// A bad request: its name, its head and its body as bytes on the wire.
type Bad = (String, Vec<u8>, Vec<u8>);

/// Bad requests (common ones, heavy ones) and a good request.
type Requests = (Vec<Bad>, Vec<Bad>, Vec<u8>);

/// The bad requests that carry a body: (common ones, heavy ones); and a good request.
fn requests(addr: SocketAddr) -> Result<Requests, VerifyError> {
    let (mut bad, mut heavy) = (Vec::new(), Vec::new());
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
            let request = (name, head.into_bytes(), body.to_vec());
            match v.heavy {
                true => heavy.push(request),
                false => bad.push(request),
            }
        }
    }
    if bad.is_empty() {
        return Err(BadInput("the vectors hold no bad request with a body".into()));
    }
    Ok((bad, heavy, format!("GET /students HTTP/1.1\r\nhost: {addr}\r\n\r\n").into_bytes()))
}

/// Connections that go through their share of the pairs at the same time: the waits for an early
/// answer and the pauses before good requests (most of a pair's few milliseconds) overlap.
pub const CONNECTIONS: usize = 8;

/// `pairs` times: a bad request, then a good one on the same connection; spread over
/// `CONNECTIONS` connections, each taking a run of consecutive pairs (so each one sees the mix of
/// early and late bodies, pauses and bad requests that one connection saw before).
pub(crate) async fn bad_then_good(addr: SocketAddr, pairs: usize) -> Result<KeepAliveStats, VerifyError> {
    let (bad, heavy, good) = requests(addr)?;
    let (bad, heavy, good) = (std::sync::Arc::new(bad), std::sync::Arc::new(heavy), std::sync::Arc::new(good));
    let mut lanes = tokio::task::JoinSet::new();
    let per_lane = pairs.div_ceil(CONNECTIONS).max(1);
    for first in (0..pairs).step_by(per_lane) {
        let (bad, heavy, good) = (bad.clone(), heavy.clone(), good.clone());
        let turns = first..(first + per_lane).min(pairs);
        lanes.spawn(async move { lane(addr, &bad, &heavy, &good, turns).await });
    }
    let mut stats = KeepAliveStats { pairs, ..KeepAliveStats::default() };
    while let Some(done) = lanes.join_next().await {
        // A lane that panicked or was cancelled: its connection is not had.
        let lane = done.map_err(|e| Unreachable(because("a keep-alive connection's task failed", &e)))??;
        stats.announced += lane.announced;
        stats.silent.extend(lane.silent);
    }
    Ok(stats)
}

/// The pairs numbered `turns`, one after another on one connection (a new one after a close).
async fn lane(
    addr: SocketAddr,
    bad: &[Bad],
    heavy: &[Bad],
    good: &[u8],
    turns: impl Iterator<Item = usize>,
) -> Result<KeepAliveStats, VerifyError> {
    let mut stats = KeepAliveStats::default();
    let mut conn = Conn::open(addr).await?;
    for i in turns {
        stats.pairs += 1;
        let (name, head, body) = turn_request(i, bad, heavy);
        // Every other one sends its body only after a short wait for an early answer.
        let refusal = if i % 2 == 0 {
            conn.exchange(&[head.as_slice(), body].concat()).await
        } else {
            conn.exchange_late_body(head, body).await
        };
        let refusal = refusal.map_err(|e| e.within(format!("{name}: no answer")))?;
        if refusal.close {
            stats.announced += 1;
            conn = Conn::open(addr).await?;
            continue;
        }
        // Three in four good requests come after a pause, as from a slower client: a server that
        // closes silently does so once it finds nothing more to read (hyper did, for Python's
        // http.client, 15 times in 3000 pairs; never for this client at full speed).
        if i % 4 != 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        match conn.exchange(good).await {
            Ok(answer) if answer.status == 200 => {
                if answer.close {
                    conn = Conn::open(addr).await?;
                }
            }
            Ok(answer) => return Err(Contract(format!("GET /students after {name}: status {}", answer.status))),
            Err(e) => {
                stats.silent.push(format!("after {name} (answered {}): {e}", refusal.status));
                conn = Conn::open(addr).await?;
            }
        }
    }
    Ok(stats)
}

/// The bad request of pair `i`: a heavy one once in `RARE_EVERY` pairs, on an even pair (body
/// sent at once) and an odd one (body sent late) in turn; the common ones in order otherwise.
fn turn_request<'a>(i: usize, bad: &'a [Bad], heavy: &'a [Bad]) -> &'a Bad {
    let (place, block) = (i % RARE_EVERY, i / RARE_EVERY);
    match heavy.is_empty() || place != block % 2 {
        true => &bad[i % bad.len()],
        false => &heavy[block % heavy.len()],
    }
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
    async fn open(addr: SocketAddr) -> Result<Conn, VerifyError> {
        let tcp = TcpStream::connect(addr).await.map_err(|e| Unreachable(because(format!("connect to {addr}"), &e)))?;
        tcp.set_nodelay(true).map_err(|e| Unreachable(chain(&e)))?;
        Ok(Conn { tcp, buf: Vec::new() })
    }

    /// Writes `request` and reads its whole answer (Content-Length or chunked).
    async fn exchange(&mut self, request: &[u8]) -> Result<Answer, VerifyError> {
        self.tcp.write_all(request).await.map_err(|e| Unreachable(because("the request could not be written", &e)))?;
        self.answer().await
    }

    /// Writes the head and waits a little for an answer before writing the body, as a client
    /// that watches for an early refusal (RFC 9112 §9.6): a server that answered first without
    /// saying `Connection: close` must still read the body that follows, and keep the connection.
    async fn exchange_late_body(&mut self, head: &[u8], body: &[u8]) -> Result<Answer, VerifyError> {
        self.tcp
            .write_all(head)
            .await
            .map_err(|e| Unreachable(because("the request's head could not be written", &e)))?;
        // Reading is cancel-safe here: what was read stays in `buf` for the next attempt.
        match tokio::time::timeout(std::time::Duration::from_millis(5), self.answer()).await {
            Ok(Ok(early)) if early.close => Ok(early),
            Ok(Ok(early)) => {
                // Sent as a client that was not told of a close would; the next request shows
                // whether the server kept the connection.
                let _ = self.tcp.write_all(body).await;
                Ok(early)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => {
                self.tcp
                    .write_all(body)
                    .await
                    .map_err(|e| Unreachable(because("the request's body could not be written", &e)))?;
                self.answer().await
            }
        }
    }

    /// Reads one whole answer. Nothing is taken from `buf` until the answer is complete, so a
    /// read cancelled half-way (the wait for an early answer) leaves it whole for the next.
    /// An answer that is not HTTP breaks the contract; a connection that fails or closes first is
    /// [`VerifyError::Unreachable`].
    async fn answer(&mut self) -> Result<Answer, VerifyError> {
        loop {
            if let Some((end, answer)) = complete_answer(&self.buf)? {
                self.buf.drain(..end);
                return Ok(answer);
            }
            if self.fill().await? == 0 {
                // Framed by the close: the body is what came.
                let mut headers = [httparse::EMPTY_HEADER; 64];
                let mut response = httparse::Response::new(&mut headers);
                if let httparse::Status::Complete(_) = response.parse(&self.buf).map_err(|e| Contract(chain(&e)))? {
                    let status = response.code.unwrap_or(0);
                    self.buf.clear();
                    return Ok(Answer { status, close: true });
                }
                return Err(Unreachable("the server closed the connection".into()));
            }
        }
    }

    /// Reads more into `buf`: how many bytes (0 at the end of the stream).
    async fn fill(&mut self) -> Result<usize, VerifyError> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.tcp.read(&mut chunk).await.map_err(|e| Unreachable(because("the connection failed", &e)))?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }
}

/// The answer at the start of `buf` and where it ends, once it is all there (Content-Length or
/// chunked; one framed by the close is never complete before the close). One that is not HTTP
/// breaks the contract.
fn complete_answer(buf: &[u8]) -> Result<Option<(usize, Answer)>, VerifyError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head) = response.parse(buf).map_err(|e| Contract(chain(&e)))? else {
        return Ok(None);
    };
    let value = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
    };
    let answer =
        Answer { status: response.code.unwrap_or(0), close: value("connection").is_some_and(|v| v.contains("close")) };
    let end = if matches!(answer.status, 100..=199 | 204 | 304) {
        Some(head)
    } else if value("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        chunked_end(&buf[head..])?.map(|n| head + n)
    } else if let Some(n) = value("content-length").and_then(|v| v.trim().parse::<usize>().ok()) {
        (buf.len() >= head + n).then_some(head + n)
    } else {
        None
    };
    Ok(end.map(|end| (end, answer)))
}

/// Where a chunked body at the start of `buf` ends, once it is all there.
fn chunked_end(buf: &[u8]) -> Result<Option<usize>, VerifyError> {
    let mut at = 0;
    loop {
        let Some(line) = buf[at..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let text = std::str::from_utf8(&buf[at..at + line]).map_err(|e| Contract(chain(&e)))?;
        let size =
            usize::from_str_radix(text.split(';').next().unwrap_or("").trim(), 16).map_err(|e| Contract(chain(&e)))?;
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
        assert!(matches!(chunked_end(b"zz\r\n"), Err(Contract(_))));
        assert!(matches!(complete_answer(b"hello, this is not HTTP\r\n\r\n"), Err(Contract(_))));
    }

    #[test]
    fn every_bad_request_with_a_body_is_sent() {
        let (bad, heavy, good) = requests("127.0.0.1:8080".parse().unwrap()).unwrap();
        assert!(
            bad.iter().any(|(name, _, _)| name.starts_with("PUT /auth/")),
            "{:?}",
            bad.iter().map(|b| &b.0).collect::<Vec<_>>()
        );
        assert!(heavy.iter().any(|(name, _, _)| name.starts_with("POST /life/step")), "the population limit");
        for (name, head, body) in bad.iter().chain(&heavy) {
            let head = String::from_utf8_lossy(head);
            assert!(head.ends_with("\r\n\r\n"), "{name}: {head}");
            assert!(head.contains(&format!("content-length: {}\r\n", body.len())), "{name}: {head}");
        }
        assert!(good.starts_with(b"GET /students HTTP/1.1\r\n"));
    }

    #[test]
    fn heavy_requests_come_rarely_with_their_body_early_and_late() {
        let named = |name: &str| (name.to_string(), Vec::new(), Vec::new());
        let bad: Vec<Bad> = (0..50).map(|i| named(&format!("bad {i}"))).collect();
        let heavy = vec![named("heavy")];
        let heavy_turns: Vec<usize> = (0..3000).filter(|&i| turn_request(i, &bad, &heavy).0 == "heavy").collect();
        assert_eq!(heavy_turns.len(), 3000 / RARE_EVERY);
        assert!(heavy_turns.iter().any(|i| i % 2 == 0) && heavy_turns.iter().any(|i| i % 2 == 1), "{heavy_turns:?}");
        // Every common one still comes, and without heavy ones the order is the plain one.
        assert!(bad.iter().all(|b| (0..3000).any(|i| turn_request(i, &bad, &heavy).0 == b.0)));
        assert!((0..3000).all(|i| turn_request(i, &bad, &[]).0 == bad[i % 50].0));
    }
}
