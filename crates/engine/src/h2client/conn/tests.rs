//! The client against the `h2` crate's server (what hyper, tonic and axum serve with) on loopback:
//! answers, trailers, many streams, the server's stream limit, flow control both ways, header
//! blocks split over CONTINUATION, resets, cancelled calls, GOAWAY (streams above its last id not
//! processed, those at or below it answered or failed) and broken connections.

use super::*;
use crate::h2client::frame::Head;
use crate::h2client::request_block;
use h2::server::{self, SendResponse};
use http::{HeaderMap, Request, Response};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

/// What the test server does with each request, after reading its whole body.
type Handler = Arc<dyn Fn(Request<()>, Bytes, SendResponse<Bytes>) + Send + Sync>;

struct Server {
    addr: std::net::SocketAddr,
    /// Bodies the server received, in order of completion.
    bodies: Arc<Mutex<Vec<usize>>>,
}

async fn serve(builder: server::Builder, handler: Handler) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(Mutex::new(vec![]));
    let seen = bodies.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let mut conn = builder.handshake::<_, Bytes>(tcp).await.unwrap();
            let handler = handler.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                while let Some(Ok((request, respond))) = conn.accept().await {
                    let handler = handler.clone();
                    let seen = seen.clone();
                    tokio::spawn(async move {
                        let (head, mut body) = request.into_parts();
                        let mut all = Vec::new();
                        while let Some(Ok(chunk)) = body.data().await {
                            let _ = body.flow_control().release_capacity(chunk.len());
                            all.extend_from_slice(&chunk);
                        }
                        seen.lock().unwrap().push(all.len());
                        handler(Request::from_parts(head, ()), all.into(), respond);
                    });
                }
            });
        }
    });
    Server { addr, bodies }
}

/// Answers 200 with `body` and, when given, a `grpc-status` trailer.
fn answer(mut respond: SendResponse<Bytes>, body: Bytes, trailer: Option<&'static str>) {
    let response = Response::builder().status(200).header("x-kind", "test").body(()).unwrap();
    let mut send = respond.send_response(response, false).unwrap();
    tokio::spawn(async move {
        send.reserve_capacity(body.len());
        let mut left = body;
        while !left.is_empty() {
            let room = std::future::poll_fn(|cx| send.poll_capacity(cx)).await.unwrap().unwrap();
            let part = left.split_to(room.min(left.len()));
            send.send_data(part, false).unwrap();
        }
        match trailer {
            Some(status) => {
                let mut t = HeaderMap::new();
                t.insert("grpc-status", status.parse().unwrap());
                send.send_trailers(t).unwrap();
            }
            None => send.send_data(Bytes::new(), true).unwrap(),
        }
    });
}

/// For a raw server of a test: reads the client's frames up to a request's HEADERS, and gives its
/// stream id.
async fn next_request(tcp: &mut TcpStream) -> u32 {
    loop {
        let mut head = [0u8; frame::HEADER_LEN];
        tcp.read_exact(&mut head).await.unwrap();
        let head = Head::parse(&head);
        tcp.read_exact(&mut vec![0u8; head.len as usize]).await.unwrap();
        if head.kind == frame::HEADERS {
            return head.stream;
        }
    }
}

async fn connect(addr: std::net::SocketAddr) -> Connection {
    let tcp = TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    Connection::start(tcp)
}

fn block(path: &str) -> RequestBlocks {
    request_block("POST", false, "localhost", path, &[("content-type".into(), "application/grpc".into())])
}

async fn call(conn: &Connection, path: &str, body: &Bytes) -> (Result<Answer, H2Error>, usize) {
    call_with(conn, &block(path), body).await
}

async fn call_with(conn: &Connection, blocks: &RequestBlocks, body: &Bytes) -> (Result<Answer, H2Error>, usize) {
    let mut received = 0;
    let answer = conn.exchange(blocks, body, |chunk| received += chunk.len()).await;
    (answer, received)
}

/// Runs the calls as tasks, all at once, and gives their results in order.
async fn all<F>(calls: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let tasks: Vec<_> = calls.map(tokio::spawn).collect();
    let mut out = vec![];
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn echo_size() -> Handler {
    // Answers with as many bytes as the path says (`/n/1000`), `grpc-status` from the request's size.
    Arc::new(|request, body, respond| {
        let n: usize = request.uri().path().trim_start_matches("/n/").parse().unwrap_or(0);
        let _ = body;
        answer(respond, Bytes::from(vec![7u8; n]), Some("0"));
    })
}

#[tokio::test]
async fn answers_with_headers_data_and_trailers_on_many_streams() {
    let server = serve(server::Builder::new(), echo_size()).await;
    let conn = connect(server.addr).await;
    let calls = (0..200).map(|i| {
        let conn = conn.clone();
        async move { call(&conn, &format!("/n/{}", i * 10), &Bytes::from_static(b"req")).await }
    });
    for (i, (answer, received)) in all(calls).await.into_iter().enumerate() {
        let answer = answer.unwrap();
        assert_eq!(answer.status, 200);
        assert_eq!(answer.headers.get("x-kind"), Some(&b"test"[..]));
        assert_eq!(answer.trailers.unwrap().get("grpc-status"), Some(&b"0"[..]));
        assert_eq!(received, i * 10);
    }
    assert!(conn.is_usable());
    assert_eq!(conn.shared.lock().streams.len(), 0, "every stream's slot is gone");
    assert_eq!(conn.shared.lock().open, 0);
}

#[tokio::test]
async fn requests_shrink_to_table_indexes_unless_the_server_has_no_table() {
    let seen = Arc::new(Mutex::new(vec![]));
    let handler = |seen: Arc<Mutex<Vec<String>>>| -> Handler {
        Arc::new(move |request, _, respond| {
            let kind = request.headers().get("content-type").unwrap().to_str().unwrap().to_string();
            seen.lock().unwrap().push(format!("{} {kind}", request.uri().path()));
            answer(respond, Bytes::from_static(b"ok"), None);
        })
    };
    for table in [4096, 0] {
        let mut builder = server::Builder::new();
        builder.header_table_size(table);
        let server = serve(builder, handler(seen.clone())).await;
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let counter = Arc::new(crate::net::counted::WireCounter::default());
        let conn = Connection::start(crate::net::counted::Counted::new(tcp, counter.clone()));
        let block = block("/students");
        let mut sent = vec![];
        for _ in 0..4 {
            let before = counter.totals().sent;
            assert_eq!(call_with(&conn, &block, &Bytes::new()).await.1, 2);
            sent.push(counter.totals().sent - before);
        }
        // Another request on the same connection sends its fields literally.
        assert_eq!(call(&conn, "/other", &Bytes::new()).await.1, 2);
        let (last, literal) = (sent[3] as usize, 9 + block.literal.len());
        if table == 0 {
            // After the server's SETTINGS: a size update to 0, then literal fields only.
            assert!(last >= literal, "{sent:?}: {last} vs {literal}");
        } else {
            assert!(last < 9 + block.first.len() && last >= 9 + block.repeat.len(), "{sent:?}");
        }
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 10);
    assert!(seen.iter().all(|s| s == "/students application/grpc" || s == "/other application/grpc"), "{seen:?}");
}

#[tokio::test]
async fn the_servers_stream_limit_queues_calls() {
    let mut builder = server::Builder::new();
    builder.max_concurrent_streams(3);
    let handler: Handler = Arc::new(|_, _, respond| {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            answer(respond, Bytes::from_static(b"late"), None);
        });
    });
    let server = serve(builder, handler).await;
    let conn = connect(server.addr).await;
    // Let the server's SETTINGS arrive, then watch how many streams are open at once.
    call(&conn, "/", &Bytes::new()).await.0.unwrap();
    let peak = Arc::new(Mutex::new(0usize));
    let watch = {
        let (conn, peak) = (conn.clone(), peak.clone());
        tokio::spawn(async move {
            loop {
                let open = conn.shared.lock().open;
                {
                    let mut p = peak.lock().unwrap();
                    *p = (*p).max(open);
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    let calls = (0..12).map(|_| {
        let conn = conn.clone();
        async move { call(&conn, "/", &Bytes::new()).await }
    });
    for (answer, received) in all(calls).await {
        assert_eq!((answer.unwrap().status, received), (200, 4));
    }
    watch.abort();
    assert_eq!(*peak.lock().unwrap(), 3, "never more streams than the server allows");
}

#[tokio::test]
async fn large_bodies_flow_both_ways_through_small_windows() {
    let mut builder = server::Builder::new();
    builder.initial_window_size(1000).initial_connection_window_size(5000).max_frame_size(16_384);
    let server = serve(builder, echo_size()).await;
    let conn = connect(server.addr).await;
    let body = Bytes::from(vec![1u8; 300_000]);
    let calls = (0..4).map(|_| {
        let (conn, body) = (conn.clone(), body.clone());
        async move { call(&conn, "/n/9000000", &body).await }
    });
    for (answer, received) in all(calls).await {
        assert_eq!(answer.unwrap().status, 200);
        assert_eq!(received, 9_000_000, "more than our 4 MiB stream and 16 MiB connection windows together");
    }
    assert_eq!(*server.bodies.lock().unwrap(), [300_000; 4]);
}

#[tokio::test]
async fn counted_answers_give_their_windows_back_without_being_read() {
    let server = serve(server::Builder::new(), echo_size()).await;
    let conn = connect(server.addr).await;
    // Counted calls beside read ones on one connection; 9 MB each is more than our 4 MiB stream
    // and 16 MiB connection windows, so only the WINDOW_UPDATEs the reader sends let them finish.
    let calls = (0..6).map(|i| {
        let conn = conn.clone();
        async move {
            let blocks = block("/n/9000000");
            if i % 2 == 0 {
                let (answer, received) = conn.count(&blocks, &Bytes::new()).await;
                (answer, received as usize)
            } else {
                call_with(&conn, &blocks, &Bytes::new()).await
            }
        }
    });
    for (answer, received) in all(calls).await {
        assert_eq!(answer.unwrap().trailers.unwrap().get("grpc-status"), Some(&b"0"[..]));
        assert_eq!(received, 9_000_000);
    }
    let st = conn.shared.lock();
    assert_eq!(st.streams.len(), 0, "every stream's slot is gone");
    assert!(st.recv_window > 0);
}

#[tokio::test]
async fn headers_larger_than_a_frame_arrive_over_continuation() {
    let handler: Handler = Arc::new(|_, _, mut respond| {
        let big = "v".repeat(40_000);
        let response = Response::builder().status(201).header("x-big", big).body(()).unwrap();
        respond.send_response(response, true).unwrap();
    });
    let mut builder = server::Builder::new();
    builder.max_header_list_size(1 << 20);
    let server = serve(builder, handler).await;
    let conn = connect(server.addr).await;
    for _ in 0..3 {
        let (answer, received) = call(&conn, "/", &Bytes::new()).await;
        let answer = answer.unwrap();
        assert_eq!((answer.status, received), (201, 0));
        assert_eq!(answer.headers.get("x-big").map(|v| v.len()), Some(40_000));
        assert!(answer.trailers.is_none());
    }
}

#[tokio::test]
async fn a_reset_stream_fails_one_call_and_the_connection_goes_on() {
    let handler: Handler = Arc::new(|request, _, mut respond| {
        if request.uri().path() == "/reset" {
            respond.send_reset(h2::Reason::REFUSED_STREAM);
        } else {
            answer(respond, Bytes::from_static(b"ok"), None);
        }
    });
    let server = serve(server::Builder::new(), handler).await;
    let conn = connect(server.addr).await;
    let (answer, _) = call(&conn, "/reset", &Bytes::new()).await;
    let e = answer.unwrap_err();
    assert_eq!(e, H2Error::Reset(0x7));
    assert!(e.connection_survives() && conn.is_usable());
    assert!(e.unprocessed(), "REFUSED_STREAM: the server did not process it, so it may be sent again");
    assert!(!H2Error::Reset(frame::CANCEL).unprocessed());
    assert_eq!(call(&conn, "/", &Bytes::new()).await.1, 2);
}

#[tokio::test]
async fn a_cancelled_call_resets_its_stream_and_frees_it() {
    let mut builder = server::Builder::new();
    builder.max_concurrent_streams(1);
    let handler: Handler = Arc::new(|request, _, respond| {
        if request.uri().path() == "/never" {
            std::mem::forget(respond); // no answer, ever
        } else {
            answer(respond, Bytes::from_static(b"ok"), None);
        }
    });
    let server = serve(builder, handler).await;
    let conn = connect(server.addr).await;
    call(&conn, "/", &Bytes::new()).await.0.unwrap(); // the server's SETTINGS are in
    let stalled = tokio::time::timeout(Duration::from_millis(50), call(&conn, "/never", &Bytes::new())).await;
    assert!(stalled.is_err(), "the stalled call timed out");
    assert_eq!(conn.shared.lock().open, 0, "the cancelled stream no longer counts");
    let next = tokio::time::timeout(Duration::from_secs(5), call(&conn, "/", &Bytes::new())).await;
    assert_eq!(next.expect("the only stream the server allows is free again").1, 2);
}

#[tokio::test]
async fn goaway_refuses_new_calls_and_a_closed_connection_fails_them() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut conn = server::handshake(tcp).await.unwrap();
        let (_, respond) = conn.accept().await.unwrap().unwrap();
        answer(respond, Bytes::from_static(b"ok"), None);
        // h2's graceful shutdown: GOAWAY with the highest id, a PING, then GOAWAY with the real last id.
        conn.graceful_shutdown();
        while conn.accept().await.is_some() {}
    });
    let goaways = Arc::new(AtomicU64::new(0));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let conn = Connection::start_counted(tcp, goaways.clone());
    assert_eq!(call(&conn, "/", &Bytes::new()).await.1, 2);
    for _ in 0..200 {
        if !conn.is_usable() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!conn.is_usable(), "GOAWAY makes the connection unusable");
    let e = call(&conn, "/", &Bytes::new()).await.0.unwrap_err();
    assert!(!e.connection_survives() && e.unprocessed(), "never sent: {e:?}");
    assert_eq!(goaways.load(Ordering::Relaxed), 1, "one connection ended, however many GOAWAY frames");
}

#[tokio::test]
async fn a_server_that_does_not_speak_http2_breaks_the_call() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = tcp.read(&mut buf).await;
        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    });
    let conn = connect(addr).await;
    let e = tokio::time::timeout(Duration::from_secs(5), call(&conn, "/", &Bytes::new())).await.unwrap();
    assert_eq!(e.0.unwrap_err(), H2Error::Protocol, "its answer is no HTTP/2 frame");
    assert!(!conn.is_usable());
}

#[tokio::test]
async fn dropping_the_last_handle_closes_the_socket() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let conn = connect(addr).await;
    let (mut tcp, _) = listener.accept().await.unwrap();
    let mut preface = vec![0u8; frame::PREFACE.len()];
    tcp.read_exact(&mut preface).await.unwrap();
    assert_eq!(preface, frame::PREFACE);
    let copy = conn.clone();
    drop(conn);
    drop(copy);
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the client closed its end");
}

/// A raw server: reads the client's frames until `streams` requests have arrived, answers the
/// first `answered` of them with 200, sends GOAWAY naming request `last` (0-based, in id order) as
/// the last stream it processed, and closes the connection (a FIN after its frames).
async fn goaway_server(listener: TcpListener, streams: usize, answered: usize, last: usize) {
    let (mut tcp, _) = listener.accept().await.unwrap();
    let mut out = Vec::new();
    frame::put_settings(&mut out, &[]);
    tcp.write_all(&out).await.unwrap();
    let mut buf = vec![0u8; frame::PREFACE.len()];
    tcp.read_exact(&mut buf).await.unwrap();
    let mut ids = Vec::new();
    while ids.len() < streams {
        let mut head = [0u8; frame::HEADER_LEN];
        tcp.read_exact(&mut head).await.unwrap();
        let head = Head::parse(&head);
        let mut payload = vec![0u8; head.len as usize];
        tcp.read_exact(&mut payload).await.unwrap();
        if head.kind == frame::HEADERS {
            ids.push(head.stream);
        }
    }
    ids.sort();
    let mut out = Vec::new();
    for &id in &ids[..answered] {
        // 0x88: ":status: 200" from HPACK's static table.
        frame::put_headers(&mut out, id, &[0x88], true, frame::DEFAULT_MAX_FRAME as usize);
    }
    frame::put_goaway(&mut out, ids[last], 0);
    tcp.write_all(&out).await.unwrap();
    tcp.shutdown().await.unwrap();
    // Read until the client closes too, so no unread byte turns the close into a reset.
    let mut rest = Vec::new();
    let _ = tcp.read_to_end(&mut rest).await;
}

/// Three calls at once on one connection, against [`goaway_server`]; their results and the
/// connection's GOAWAY count.
async fn three_calls_then_goaway(answered: usize, last: usize) -> (Vec<Result<Answer, H2Error>>, Connection, u64) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(goaway_server(listener, 3, answered, last));
    let goaways = Arc::new(AtomicU64::new(0));
    let conn = Connection::start_counted(TcpStream::connect(addr).await.unwrap(), goaways.clone());
    let results = all((0..3).map(|_| {
        let conn = conn.clone();
        async move { call(&conn, "/", &Bytes::new()).await.0 }
    }))
    .await;
    server.await.unwrap();
    let counted = goaways.load(Ordering::Relaxed);
    (results, conn, counted)
}

#[tokio::test]
async fn streams_above_the_goaway_last_id_were_not_processed_and_the_one_at_it_completes() {
    // Answered, then GOAWAY naming it, then the socket closes: a clean end, not an error.
    let (results, conn, goaways) = three_calls_then_goaway(1, 0).await;
    let ok = results.iter().filter(|r| r.as_ref().is_ok_and(|a| a.status == 200)).count();
    assert_eq!(ok, 1, "the stream at the last id is answered: {results:?}");
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(*e, H2Error::GoAway, "{results:?}");
        assert!(e.unprocessed(), "above the last id: the server did not process it");
    }
    assert_eq!(goaways, 1);
    // No new stream on a connection after its GOAWAY, and whatever comes now was never sent.
    let after = call(&conn, "/", &Bytes::new()).await.0.unwrap_err();
    assert!(after.unprocessed() && !conn.is_usable(), "{after:?}");
}

#[tokio::test]
async fn a_stream_at_or_below_the_last_id_unanswered_when_the_socket_closes_is_an_error() {
    // The server says it processed two streams but answers one before closing: the other may
    // have been processed, so it must not be sent again.
    let (results, _, goaways) = three_calls_then_goaway(1, 1).await;
    let mut kinds: Vec<_> = results.iter().map(|r| r.as_ref().map(|a| a.status).map_err(|e| *e)).collect();
    kinds.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(kinds, [Err(H2Error::Broken), Err(H2Error::GoAway), Ok(200)], "{results:?}");
    assert!(!H2Error::Broken.unprocessed());
    assert_eq!(goaways, 1);
}

#[test]
fn data_beyond_the_windows_we_advertised_is_a_flow_control_error() {
    // Against the state itself: on a real socket the call takes the data as it comes and gives
    // the window back, so no timing makes a server overrun it for sure.
    let usable = AtomicBool::new(true);
    let data = |st: &mut State, stream: u32, len: usize| {
        let head = Head { len: len as u32, kind: frame::DATA, flags: 0, stream };
        st.on_frame(head, &vec![0u8; len], &usable)
    };
    let answering = |st: &mut State, id: u32| {
        let slot = Slot { head: Some(HeaderList::default()), recv_window: i64::from(STREAM_WINDOW), ..Slot::default() };
        st.streams.insert(id, slot);
        st.next_id = st.next_id.max(id + 2);
        st.open += 1;
    };
    let mut st = State::new(vec![]);
    answering(&mut st, 1);
    for _ in 0..STREAM_WINDOW / MAX_FRAME {
        assert_eq!(data(&mut st, 1, MAX_FRAME as usize), Ok(()));
    }
    assert_eq!(data(&mut st, 1, 1), Err(frame::FLOW_CONTROL_ERROR), "one byte past the stream's window");
    // The connection's window: streams within theirs, together beyond it.
    let mut st = State::new(vec![]);
    for id in [1, 3, 5, 7, 9] {
        answering(&mut st, id);
    }
    let per_stream = (STREAM_WINDOW / MAX_FRAME) as usize;
    let mut results = vec![];
    for id in [1, 3, 5, 7, 9] {
        for _ in 0..per_stream {
            results.push(data(&mut st, id, MAX_FRAME as usize));
        }
    }
    let fine = (CONNECTION_WINDOW / MAX_FRAME) as usize;
    assert!(results[..fine].iter().all(|r| r.is_ok()));
    assert_eq!(results[fine], Err(frame::FLOW_CONTROL_ERROR), "past the connection's window");
}

mod pieces;
mod rules;

#[tokio::test]
async fn a_request_sent_in_pieces_ends_with_its_last_and_settles_first() {
    let server = serve(server::Builder::new(), Arc::new(|_, body, respond| answer(respond, body, Some("0")))).await;
    let conn = connect(server.addr).await;
    conn.settled().await.expect("the server's SETTINGS");
    let blocks = block("/pieces");
    // Larger than the default stream window: later pieces wait for WINDOW_UPDATEs.
    let pieces: Vec<Bytes> = (0..4u8).map(|i| Bytes::from(vec![i; 40_000])).collect();
    let mut stream = conn.open(&blocks, &pieces[0], false).await.expect("a stream");
    for piece in &pieces[1..] {
        stream.send(piece.clone(), false);
    }
    stream.send(Bytes::new(), true);
    stream.send(Bytes::from_static(b"after the end"), true); // taken by nothing
    let mut got = Vec::new();
    let answer = loop {
        if let Some(answer) = stream.next(&mut |chunk: &[u8]| got.extend_from_slice(chunk)).await {
            break answer.expect("answered");
        }
    };
    assert_eq!(got, pieces.concat(), "the server read every piece, in order, and no more");
    assert_eq!(answer.trailers.unwrap().get("grpc-status"), Some(&b"0"[..]));
    // An empty stream: HEADERS, then an empty DATA frame that ends it.
    let mut stream = conn.open(&blocks, &Bytes::new(), false).await.expect("a stream");
    stream.send(Bytes::new(), true);
    let answer = loop {
        if let Some(answer) = stream.next(&mut |_: &[u8]| {}).await {
            break answer.expect("answered");
        }
    };
    assert_eq!(answer.status, 200);
    assert_eq!(*server.bodies.lock().unwrap(), [160_000, 0]);
}

#[tokio::test]
async fn settling_fails_when_the_peer_is_no_http2_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        use tokio::io::AsyncWriteExt;
        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
    });
    let conn = connect(addr).await;
    let e = tokio::time::timeout(Duration::from_secs(10), conn.settled()).await.expect("settles or fails");
    assert!(e.is_err(), "{e:?}");
}
