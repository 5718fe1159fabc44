//! The client against a raw server of ours that breaks RFC 9113 frame by frame: each violation
//! ends the connection or resets the stream with the code the RFC gives; header lists counted as
//! the RFC counts them; GOAWAY takes back what was queued for the streams it refuses.

use super::*;

/// What the client sent back to a misbehaving server: the code of its GOAWAY (a connection
/// error) or of its RST_STREAM on the call's stream (a stream error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    GoAway(u32),
    Reset(u32),
    Nothing,
}

/// A raw server that waits for one request's HEADERS, then sends its SETTINGS and `frames` as
/// they are; gives what the call got and what the client sent back until it closed (after a
/// GOAWAY) or reset the call's stream.
async fn misbehaving(frames: impl FnOnce(u32) -> Vec<u8> + Send + 'static) -> (Result<Answer, H2Error>, Reply) {
    exchange_with(frames, false).await
}

/// [`misbehaving`]; `close` closes the connection once the call has its result.
async fn exchange_with(
    frames: impl FnOnce(u32) -> Vec<u8> + Send + 'static,
    close: bool,
) -> (Result<Answer, H2Error>, Reply) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut preface = vec![0u8; frame::PREFACE.len()];
        tcp.read_exact(&mut preface).await.unwrap();
        let stream = next_request(&mut tcp).await;
        let mut out = Vec::new();
        frame::put_settings(&mut out, &[]);
        out.extend(frames(stream));
        let _ = tcp.write_all(&out).await;
        // The client's frames until it closes (after a GOAWAY) or resets the call's stream.
        let mut reply = Reply::Nothing;
        loop {
            let mut head = [0u8; frame::HEADER_LEN];
            if tcp.read_exact(&mut head).await.is_err() {
                break reply;
            }
            let head = Head::parse(&head);
            let mut payload = vec![0u8; head.len as usize];
            if tcp.read_exact(&mut payload).await.is_err() {
                break reply;
            }
            match head.kind {
                frame::GOAWAY => reply = Reply::GoAway(u32::from_be_bytes(payload[4..8].try_into().unwrap())),
                frame::RST_STREAM if head.stream == stream => break Reply::Reset(frame::word(&payload).unwrap()),
                _ => {}
            }
        }
    });
    let conn = connect(addr).await;
    let result = tokio::time::timeout(Duration::from_secs(5), call(&conn, "/", &Bytes::new())).await.unwrap().0;
    // After a connection error the client sends its GOAWAY and closes on its own.
    let kept = match close {
        true => {
            drop(conn);
            None
        }
        false => Some(conn),
    };
    let reply = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
    drop(kept);
    (result, reply)
}

fn raw_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_head(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

/// An HPACK literal field without indexing and with a new name (names and values under 127 bytes).
fn literal(name: &str, value: &str) -> Vec<u8> {
    [&[0u8, name.len() as u8][..], name.as_bytes(), &[value.len() as u8], value.as_bytes()].concat()
}

/// `:status: 200` from HPACK's static table.
const STATUS_200: u8 = 0x88;

/// A complete answer on `stream`: its head and END_STREAM.
fn answered(stream: u32) -> Vec<u8> {
    raw_frame(frame::HEADERS, frame::END_HEADERS | frame::END_STREAM, stream, &[STATUS_200])
}

/// The frames a misbehaving server sends, given the request's stream.
type Frames = Box<dyn FnOnce(u32) -> Vec<u8> + Send>;

#[tokio::test]
async fn frames_that_break_the_protocol_end_the_connection_with_the_right_code() {
    const HEAD: u8 = frame::END_HEADERS;
    let cases: Vec<(&str, Frames, u32)> = vec![
        (
            "a WINDOW_UPDATE of 0 on the connection",
            Box::new(|_| raw_frame(frame::WINDOW_UPDATE, 0, 0, &0u32.to_be_bytes())),
            frame::PROTOCOL_ERROR,
        ),
        (
            "a WINDOW_UPDATE of 0 on a stream",
            Box::new(|s| raw_frame(frame::WINDOW_UPDATE, 0, s, &0u32.to_be_bytes())),
            frame::PROTOCOL_ERROR,
        ),
        (
            "a stream's send window beyond 2^31 - 1",
            Box::new(|s| {
                let mut f = raw_frame(frame::WINDOW_UPDATE, 0, s, &frame::MAX_WINDOW.to_be_bytes());
                f.extend(raw_frame(frame::WINDOW_UPDATE, 0, s, &frame::MAX_WINDOW.to_be_bytes()));
                f
            }),
            frame::FLOW_CONTROL_ERROR,
        ),
        (
            "SETTINGS_INITIAL_WINDOW_SIZE pushing a stream's window beyond 2^31 - 1",
            Box::new(|s| {
                let grown = frame::MAX_WINDOW - frame::DEFAULT_WINDOW;
                let mut f = raw_frame(frame::WINDOW_UPDATE, 0, s, &grown.to_be_bytes());
                let mut settings = vec![];
                frame::put_settings(&mut settings, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, frame::DEFAULT_WINDOW + 1)]);
                f.extend(settings);
                f
            }),
            frame::FLOW_CONTROL_ERROR,
        ),
        ("SETTINGS on a stream", Box::new(|s| raw_frame(frame::SETTINGS, 0, s, &[])), frame::PROTOCOL_ERROR),
        (
            "a SETTINGS ack with a payload",
            Box::new(|_| raw_frame(frame::SETTINGS, frame::ACK, 0, &[0; 6])),
            frame::FRAME_SIZE_ERROR,
        ),
        (
            "SETTINGS_ENABLE_PUSH 1 from a server",
            Box::new(|_| {
                let mut f = vec![];
                frame::put_settings(&mut f, &[(frame::SETTINGS_ENABLE_PUSH, 1)]);
                f
            }),
            frame::PROTOCOL_ERROR,
        ),
        ("DATA on stream 0", Box::new(|_| raw_frame(frame::DATA, 0, 0, b"x")), frame::PROTOCOL_ERROR),
        ("DATA on an idle stream", Box::new(|s| raw_frame(frame::DATA, 0, s + 2, b"x")), frame::PROTOCOL_ERROR),
        ("HEADERS on stream 0", Box::new(|_| raw_frame(frame::HEADERS, HEAD, 0, &[STATUS_200])), frame::PROTOCOL_ERROR),
        (
            "HEADERS on an even stream",
            Box::new(|s| raw_frame(frame::HEADERS, HEAD, s + 1, &[STATUS_200])),
            frame::PROTOCOL_ERROR,
        ),
        (
            "HEADERS on an idle stream",
            Box::new(|s| raw_frame(frame::HEADERS, HEAD, s + 2, &[STATUS_200])),
            frame::PROTOCOL_ERROR,
        ),
        (
            "RST_STREAM longer than 4 bytes",
            Box::new(|s| raw_frame(frame::RST_STREAM, 0, s, &[0, 0, 0, 8, 0])),
            frame::FRAME_SIZE_ERROR,
        ),
        (
            "RST_STREAM on stream 0",
            Box::new(|_| raw_frame(frame::RST_STREAM, 0, 0, &[0, 0, 0, 8])),
            frame::PROTOCOL_ERROR,
        ),
        (
            "RST_STREAM on an idle stream",
            Box::new(|s| raw_frame(frame::RST_STREAM, 0, s + 2, &[0, 0, 0, 8])),
            frame::PROTOCOL_ERROR,
        ),
        ("GOAWAY shorter than 8 bytes", Box::new(|_| raw_frame(frame::GOAWAY, 0, 0, &[0; 7])), frame::FRAME_SIZE_ERROR),
        ("GOAWAY on a stream", Box::new(|s| raw_frame(frame::GOAWAY, 0, s, &[0; 8])), frame::PROTOCOL_ERROR),
        ("PRIORITY on stream 0", Box::new(|_| raw_frame(frame::PRIORITY, 0, 0, &[0; 5])), frame::PROTOCOL_ERROR),
        (
            "PRIORITY of 4 bytes on an idle stream",
            Box::new(|s| raw_frame(frame::PRIORITY, 0, s + 2, &[0; 4])),
            frame::FRAME_SIZE_ERROR,
        ),
        (
            "WINDOW_UPDATE on an idle stream",
            Box::new(|s| raw_frame(frame::WINDOW_UPDATE, 0, s + 2, &1u32.to_be_bytes())),
            frame::PROTOCOL_ERROR,
        ),
    ];
    for (what, frames, code) in cases {
        let (result, reply) = misbehaving(frames).await;
        assert_eq!(result.unwrap_err(), H2Error::Protocol, "{what}");
        assert_eq!(reply, Reply::GoAway(code), "{what}");
    }
}

#[tokio::test]
async fn frames_after_the_server_ended_a_stream_end_the_connection() {
    // Its answer is complete (and counted); what follows on that stream breaks the protocol.
    let cases: Vec<(&str, Frames)> = vec![
        ("HEADERS", Box::new(|s| [answered(s), answered(s)].concat())),
        ("DATA", Box::new(|s| [answered(s), raw_frame(frame::DATA, 0, s, b"late")].concat())),
    ];
    for (what, frames) in cases {
        let (result, reply) = misbehaving(frames).await;
        assert_eq!(result.unwrap().status, 200, "{what}");
        assert_eq!(reply, Reply::GoAway(frame::STREAM_CLOSED), "{what}");
    }
    // After its own RST_STREAM, a frame on the stream is a stream error (RST_STREAM again).
    let (result, reply) = misbehaving(|s| {
        [raw_frame(frame::RST_STREAM, 0, s, &frame::CANCEL.to_be_bytes()), raw_frame(frame::DATA, 0, s, b"x")].concat()
    })
    .await;
    assert_eq!(result.unwrap_err(), H2Error::Reset(frame::CANCEL));
    assert_eq!(reply, Reply::Reset(frame::STREAM_CLOSED));
}

#[tokio::test]
async fn malformed_answers_reset_their_stream_only() {
    let head = |s: u32, block: Vec<u8>, end: bool| {
        let flags = frame::END_HEADERS | if end { frame::END_STREAM } else { 0 };
        raw_frame(frame::HEADERS, flags, s, &block)
    };
    // `:status` given as a literal with the static table's name (index 8).
    let status = |code: &str| [&[0x08, 3][..], code.as_bytes()].concat();
    let cases: Vec<(&str, Frames, u32)> = vec![
        ("a 1xx head that ends the stream", Box::new(move |s| head(s, status("103"), true)), frame::PROTOCOL_ERROR),
        ("101 Switching Protocols", Box::new(move |s| head(s, status("101"), false)), frame::PROTOCOL_ERROR),
        (
            "a head without :status",
            Box::new(move |s| head(s, literal("content-type", "x"), true)),
            frame::PROTOCOL_ERROR,
        ),
        (
            "an uppercase field name",
            Box::new(move |s| head(s, [vec![STATUS_200], literal("X-Up", "1")].concat(), true)),
            frame::PROTOCOL_ERROR,
        ),
        (
            "a connection-specific field",
            Box::new(move |s| head(s, [vec![STATUS_200], literal("connection", "close")].concat(), true)),
            frame::PROTOCOL_ERROR,
        ),
        (
            "a value with a line feed",
            Box::new(move |s| head(s, [vec![STATUS_200], literal("x-a", "1\nx-b: 2")].concat(), true)),
            frame::PROTOCOL_ERROR,
        ),
        (
            "a pseudo-header in trailers",
            Box::new(move |s| [head(s, vec![STATUS_200], false), head(s, vec![STATUS_200], true)].concat()),
            frame::PROTOCOL_ERROR,
        ),
        (
            "PRIORITY of 4 bytes on the stream",
            Box::new(|s| raw_frame(frame::PRIORITY, 0, s, &[0; 4])),
            frame::FRAME_SIZE_ERROR,
        ),
    ];
    for (what, frames, code) in cases {
        let (result, reply) = misbehaving(frames).await;
        assert_eq!(result.unwrap_err(), H2Error::Malformed, "{what}");
        assert_eq!(reply, Reply::Reset(code), "{what}");
    }
    // A 1xx head that does not end the stream is informational: the real answer follows.
    let (result, reply) = exchange_with(move |s| [head(s, status("103"), false), answered(s)].concat(), true).await;
    assert_eq!(reply, Reply::Nothing);
    assert_eq!(result.unwrap().status, 200);
}

#[test]
fn a_header_list_counts_32_bytes_per_field() {
    // One one-byte field added to the table, then a block naming it by index over and over: one
    // byte on the wire per field, each costing more than its name and value once decoded.
    let usable = AtomicBool::new(true);
    let block = |refs: usize| [&[STATUS_200, 0x40, 1, b'a', 0][..], &vec![0x80 | 62; refs]].concat();
    // `:status: 200`, then the field "a" (once as the literal that adds it, then `refs` times).
    let fits = (MAX_HEADER_LIST - (7 + 3 + 32)) / (1 + 32) - 1;
    for (refs, outcome) in [(fits, Ok(())), (fits + 1, Err(frame::PROTOCOL_ERROR))] {
        let mut st = State::new(vec![]);
        st.next_id = 3;
        let slot = Slot { recv_window: i64::from(STREAM_WINDOW), ..Slot::default() };
        st.streams.insert(1, slot);
        st.open = 1;
        let payload = block(refs);
        let head = Head { len: payload.len() as u32, kind: frame::HEADERS, flags: frame::END_HEADERS, stream: 1 };
        assert_eq!(st.on_frame(head, &payload, &usable), outcome, "{refs} fields");
        if let Some(list) = st.streams.get(&1).expect("stream 1 has a slot").head.as_ref() {
            assert_eq!(list.size(), 7 + 3 + 32 + (refs + 1) * 33);
            assert!(list.size() <= MAX_HEADER_LIST);
        }
    }
}

#[tokio::test]
async fn goaway_takes_back_what_was_queued_for_the_streams_it_refuses() {
    // Frames still queued for streams above the last id are not sent after the GOAWAY.
    let usable = AtomicBool::new(true);
    let mut st = State::new(vec![]);
    for id in [1, 3, 5] {
        st.next_id = id + 2;
        st.open += 1;
        st.streams.insert(id, Slot { body: Bytes::from_static(b"body"), send_window: 1 << 20, ..Slot::default() });
        frame::put_headers(&mut st.out, id, &[0x82], false, 16_384);
        st.sending.push_back(id);
    }
    let goaway = [1u32.to_be_bytes(), 0u32.to_be_bytes()].concat();
    let head = Head { len: 8, kind: frame::GOAWAY, flags: 0, stream: 0 };
    assert_eq!(st.on_frame(head, &goaway, &usable), Ok(()));
    assert_eq!(st.sending, [1]);
    st.pump();
    let mut at = 0;
    let mut streams = vec![];
    while at < st.out.len() {
        let head = Head::parse(&st.out[at..]);
        streams.push((head.kind, head.stream));
        at += frame::HEADER_LEN + head.len as usize;
    }
    assert_eq!(streams, [(frame::HEADERS, 1), (frame::DATA, 1)]);
}
