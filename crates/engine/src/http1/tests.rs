//! HTTP/1.1 against a scripted server on loopback: framing, statuses, checks and byte counts, and
//! servers that close kept-alive connections between calls or as a request arrives.

use super::*;
use crate::net::Endpoint;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one request: up to the blank line, then `content-length` bytes; None at end of stream.
async fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut req = Vec::new();
    let mut byte = [0u8; 1];
    while !req.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.unwrap_or(0) == 0 {
            return None;
        }
        req.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&req).to_lowercase();
    let len =
        text.lines().find_map(|l| l.strip_prefix("content-length: ")).map_or(0, |v| v.trim().parse::<usize>().unwrap());
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).await.ok()?;
    req.extend_from_slice(&body);
    Some(req)
}

/// Reads a request's head only, leaving its body unread.
async fn read_head(s: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).await.unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
}

fn endpoint(addr: std::net::SocketAddr) -> Endpoint {
    Endpoint::new("127.0.0.1", addr.port(), vec![addr], None).unwrap()
}

/// A server that answers each request with the next canned answer, then closes.
async fn server(answers: Vec<Vec<u8>>) -> (Endpoint, tokio::task::JoinHandle<Vec<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut requests = Vec::new();
        for answer in answers {
            let Some(req) = read_request(&mut s).await else { return requests };
            requests.push(req);
            s.write_all(&answer).await.unwrap();
        }
        requests
    });
    (endpoint(addr), task)
}

/// A server that, on each connection in turn, answers `answered` requests with a kept-alive 200
/// (no `connection: close`), then reads one more request if `read_one_more`, and closes without a
/// word, as servers with an idle timeout or a request limit do. Counts the requests it answered.
async fn closing_server(answered: usize, read_one_more: bool) -> (Endpoint, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            for _ in 0..answered {
                if read_request(&mut s).await.is_none() {
                    break;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
            }
            if read_one_more {
                let _ = read_request(&mut s).await;
            }
        }
    });
    (endpoint(addr), count)
}

fn post(body: &'static str) -> HttpRequest {
    let mut r = HttpRequest::get("/echo");
    r.method = "POST".into();
    r.body = Bytes::from_static(body.as_bytes());
    r
}

#[tokio::test]
async fn lengths_chunks_statuses_and_bytes() {
    let answers: Vec<Vec<u8>> = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".as_slice(),
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
    ]
    .map(<[u8]>::to_vec)
    .into();
    let (endpoint, server) = server(answers.clone()).await;
    let target = Http1::new(endpoint, &post("{\"x\":1}"), Expect::default(), false);
    let mut conn = target.connect(0).await.unwrap().conn;
    let replies = [
        target.call(&mut conn).await,
        target.call(&mut conn).await,
        target.call(&mut conn).await,
        target.call(&mut conn).await,
    ];
    assert_eq!(replies[0], Reply::ok(ByteCounts { sent: 7, received: 5 }));
    assert_eq!(replies[1], Reply::ok(ByteCounts { sent: 7, received: 3 }));
    assert_eq!(replies[2].outcome, crate::Outcome::Error(ErrorKind::HttpStatus(503)));
    assert!(replies[2].keep_connection && !replies[3].keep_connection && replies[3].outcome.is_ok());
    let requests = server.await.unwrap();
    let first = String::from_utf8(requests[0].clone()).unwrap();
    assert!(first.starts_with("POST /echo HTTP/1.1\r\nhost: 127.0.0.1:"), "{first}");
    assert!(first.contains("content-type: application/json\r\ncontent-length: 7\r\n\r\n{\"x\":1}"), "{first}");
    let sent: usize = requests.iter().map(Vec::len).sum();
    let received: usize = answers.iter().map(|a| a.len()).sum();
    let wire = target.wire();
    assert_eq!((wire.sent, wire.received), (sent as u64, received as u64));
}

#[tokio::test]
async fn body_checks_gzip_and_broken_answers() {
    let zipped = crate::request::gzip(b"same");
    let mut gz =
        format!("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n", zipped.len()).into_bytes();
    gz.extend_from_slice(&zipped);
    let answers = vec![
        gz,
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nother".to_vec(),
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".to_vec(),
    ];
    let (endpoint, _server) = server(answers).await;
    let expect = Expect { status: vec![], body: Some(Box::new(|b: &[u8]| b == b"same")) };
    let target = Http1::new(endpoint, &HttpRequest::get("/x"), expect, false);
    let mut conn = target.connect(0).await.unwrap().conn;
    assert!(target.call(&mut conn).await.outcome.is_ok());
    assert_eq!(target.call(&mut conn).await.outcome, crate::Outcome::Error(ErrorKind::Validation));
    let broken = target.call(&mut conn).await; // the server closes mid-body
    assert_eq!((broken.outcome, broken.keep_connection), (crate::Outcome::Error(ErrorKind::Io), false));
}

#[test]
fn request_is_serialised_once_with_close_when_asked() {
    let endpoint = Endpoint::new("localhost", 80, vec!["127.0.0.1:80".parse().unwrap()], None).unwrap();
    let mut r = HttpRequest::get("/students");
    r.headers.push(("X-Trace".into(), "1".into()));
    let target = Http1::new(endpoint, &r, Expect::default(), true);
    assert_eq!(
        &target.request_bytes()[..],
        b"GET /students HTTP/1.1\r\nhost: localhost\r\nX-Trace: 1\r\nconnection: close\r\n\r\n"
    );
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_while_idle_is_not_reused() {
    let (endpoint, answered) = closing_server(1, false).await;
    let target = Http1::new(endpoint, &HttpRequest::get("/x"), Expect::default(), false);
    let mut conn = target.connect(0).await.unwrap().conn;
    assert!(target.reusable(&mut conn), "a new connection is");
    assert!(target.call(&mut conn).await.outcome.is_ok());
    // The server closes right after its answer: wait for that to reach the socket.
    let seen = tokio::time::timeout(Duration::from_secs(5), async {
        while target.reusable(&mut conn) {
            tokio::task::yield_now().await;
        }
    });
    assert!(seen.await.is_ok(), "the close was seen before any request was written");
    assert_eq!(answered.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_request_the_server_closed_on_unanswered_is_sent_again_only_when_idempotent() {
    for (method, again) in [("GET", true), ("PUT", true), ("POST", false)] {
        let (endpoint, _) = closing_server(1, true).await;
        let mut request = HttpRequest::get("/x");
        request.method = method.into();
        let target = Http1::new(endpoint, &request, Expect::default(), false);
        let mut conn = target.connect(0).await.unwrap().conn;
        assert!(target.call(&mut conn).await.outcome.is_ok());
        let second = target.call(&mut conn).await; // read by the server, which then closes
        assert_eq!(second.outcome, crate::Outcome::Error(ErrorKind::Io), "{method}");
        assert_eq!((second.unprocessed, second.keep_connection), (again, false), "{method}");
    }
    // On a new connection the same close is the server's answer, not a stale connection.
    let (endpoint, _) = closing_server(0, true).await;
    let target = Http1::new(endpoint, &HttpRequest::get("/x"), Expect::default(), false);
    let mut conn = target.connect(0).await.unwrap().conn;
    let first = target.call(&mut conn).await;
    assert!(!first.unprocessed && first.outcome == crate::Outcome::Error(ErrorKind::Io));
}

#[tokio::test]
async fn a_server_closing_kept_connections_between_calls_costs_no_call() {
    use crate::pacer::{Arrivals, Open};
    use crate::{Load, RateShape, Stop};
    let (endpoint, answered) = closing_server(1, false).await;
    let target = Http1::new(endpoint, &HttpRequest::get("/x"), Expect::default(), false);
    // 50 calls/s on one slot: the connection sits idle 20 ms between calls, and is closed then.
    let pacer = Open::new(RateShape::constant(50.0).unwrap(), Arrivals::Uniform);
    let (info, records) =
        crate::driver::run(target, pacer, Load::new(1, Stop::after_calls(6)), Vec::new).await.unwrap();
    assert_eq!(records.len(), 6);
    assert!(records.iter().all(|r| r.outcome.is_ok()), "{records:?}");
    assert_eq!(answered.load(Ordering::SeqCst), 6, "each call made once");
    assert_eq!(info.connections_opened, 6 + info.retries, "{info:?}");
}

/// A server that answers 413 after the request's head and closes without reading the body (as
/// go net/http and fastify do for an oversized body): the write fails, the answer is the call's.
#[tokio::test]
async fn an_answer_sent_before_the_body_was_read_is_the_calls() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        read_head(&mut s).await;
        let answer = b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!";
        s.write_all(answer).await.unwrap();
        drop(s); // closed with the body unread: the client's next writes get a reset
    });
    let mut request = post("");
    request.body = Bytes::from(vec![b'x'; 8 << 20]);
    let expect = Expect { status: vec![413], body: Some(Box::new(|b: &[u8]| b == b"too big!")) };
    let target = Http1::new(endpoint(addr), &request, expect, false);
    let mut conn = target.connect(0).await.unwrap().conn;
    let reply = target.call(&mut conn).await;
    assert!(reply.outcome.is_ok(), "{reply:?}");
    assert!(!reply.keep_connection, "the server closed it");
}

/// A server that answers 413 after the head and then neither reads nor closes (as a TLS server
/// waiting for the client's close_notify does): the client sees the answer while its write waits
/// on the full socket, stops sending, and does not wait for ever.
#[tokio::test]
async fn an_early_answer_on_a_connection_left_open_ends_the_write() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (done, finished) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        read_head(&mut s).await;
        let answer = b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\n\r\ntoo big!";
        s.write_all(answer).await.unwrap();
        let _ = finished.await; // open, unread, until the test ends
    });
    let mut request = post("");
    // Far more than both sockets' buffers hold.
    request.body = Bytes::from(vec![b'x'; 64 << 20]);
    let expect = Expect { status: vec![413], body: Some(Box::new(|b: &[u8]| b == b"too big!")) };
    let target = Http1::new(endpoint(addr), &request, expect, false);
    let mut conn = target.connect(0).await.unwrap().conn;
    let reply = tokio::time::timeout(Duration::from_secs(60), target.call(&mut conn)).await.expect("the call ended");
    assert!(reply.outcome.is_ok(), "{reply:?}");
    assert!(!reply.keep_connection, "the rest of the request was never sent");
    drop(done);
}

/// Framing fields at odds (RFC 9112 §6.3) fail the call as `protocol`, whichever would have won:
/// two lengths, or a length beside a Transfer-Encoding (chunked or not).
#[tokio::test]
async fn framing_fields_at_odds_break_the_protocol() {
    for answer in [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nokok!",
        "HTTP/1.1 200 OK\r\nContent-Length: 2, 5\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n",
    ] {
        let (endpoint, _server) = server(vec![answer.as_bytes().to_vec()]).await;
        let target = Http1::new(endpoint, &HttpRequest::get("/x"), Expect::default(), false);
        let mut conn = target.connect(0).await.unwrap().conn;
        let reply = target.call(&mut conn).await;
        assert_eq!(reply.outcome, crate::Outcome::Error(ErrorKind::Protocol), "{answer:?}");
        assert!(!reply.keep_connection, "{answer:?}");
    }
}

/// The same length repeated is one length (RFC 9110 §8.6); a final coding that is not exactly
/// `chunked` leaves the body to run to the close, and the connection is not used again.
#[tokio::test]
async fn repeated_lengths_agree_and_other_codings_run_to_the_close() {
    let cases = [
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2, 2\r\n\r\nok", 2, true),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 12, false),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\nok", 2, false),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n2\r\nok\r\n0\r\n\r\n", 2, true),
    ];
    for (answer, received, kept) in cases {
        let (endpoint, _server) = server(vec![answer.as_bytes().to_vec()]).await;
        let target = Http1::new(endpoint, &HttpRequest::get("/x"), Expect::default(), false);
        let mut conn = target.connect(0).await.unwrap().conn;
        let reply = target.call(&mut conn).await;
        assert!(reply.outcome.is_ok(), "{answer:?}: {reply:?}");
        assert_eq!((reply.bytes.received, reply.keep_connection), (received, kept), "{answer:?}");
    }
}
