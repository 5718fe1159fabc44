//! End-to-end: `callbench load` over HTTP/2 (h2c) and gRPC against servers that misbehave at the
//! frame level (a hostile server of ours speaking raw frames). The same rules as over HTTP/1.1:
//! the run ends within its duration plus one call timeout and a start-up grace, its memory stays
//! under the bound, failures are counted under their kind, good answers are all counted, no panic.

use crate::common;

use common::h2_frames::*;
use common::hostile::{assert_failed_as, checked_load, gzip_bomb, Conn, Hostile, Measured};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const RUN: [&str; 6] = ["-z", "1s", "--timeout", "1s", "-c", "4"];
/// As over HTTP/1.1 (16 MiB of a checked body per call in flight at most), plus the 16 MiB of
/// acknowledgements a SETTINGS flood may queue before the connection is ended.
const MEMORY_BOUND_KIB: u64 = 96 * 1024;

fn literal(name: &str, value: &str) -> Vec<u8> {
    [&[0u8, name.len() as u8][..], name.as_bytes(), &[value.len() as u8], value.as_bytes()].concat()
}

/// ":status: 200" from HPACK's static table.
const STATUS_200: u8 = 0x88;

/// A server connection speaking raw HTTP/2 frames.
struct H2 {
    conn: Conn,
    /// Streams whose request has not ended yet.
    open: HashSet<u32>,
}

impl H2 {
    /// Reads the client's preface and sends our (empty) SETTINGS, or `settings` if given.
    fn accept(mut conn: Conn, settings: &[u8]) -> Option<H2> {
        conn.read_exact_bytes(PREFACE_LEN)?;
        conn.write(&frame(SETTINGS, 0, 0, settings)).then_some(H2 { conn, open: HashSet::new() })
    }

    /// The stream of the next complete request (its END_STREAM seen); acknowledges SETTINGS.
    fn next_request(&mut self) -> Option<u32> {
        loop {
            let head = self.conn.read_exact_bytes(9)?;
            let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
            let (kind, flags) = (head[3], head[4]);
            let stream = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
            self.conn.read_exact_bytes(len)?;
            // Request bodies are taken as they come: the connection's window is given back at once
            // (a stream's own, 65,535 bytes, outlasts any request here).
            if kind == DATA && len > 0 && !self.conn.write(&frame(WINDOW_UPDATE, 0, 0, &(len as u32).to_be_bytes())) {
                return None;
            }
            match kind {
                SETTINGS if flags & ACK == 0 && !self.conn.write(&frame(SETTINGS, ACK, 0, &[])) => return None,
                HEADERS | DATA if flags & END_STREAM != 0 => {
                    self.open.remove(&stream);
                    return Some(stream);
                }
                HEADERS => {
                    self.open.insert(stream);
                }
                _ => {}
            }
        }
    }

    /// A good answer on `stream`: HTTP/2 "ok", or a gRPC answer of one empty message.
    fn good(&mut self, stream: u32, grpc: bool) -> bool {
        let answer = if grpc {
            let head = [&[STATUS_200][..], &literal("content-type", "application/grpc")].concat();
            [
                frame(HEADERS, END_HEADERS, stream, &head),
                frame(DATA, 0, stream, &[0, 0, 0, 0, 0]),
                frame(HEADERS, END_HEADERS | END_STREAM, stream, &literal("grpc-status", "0")),
            ]
            .concat()
        } else {
            [frame(HEADERS, END_HEADERS, stream, &[STATUS_200]), frame(DATA, END_STREAM, stream, b"ok")].concat()
        };
        self.conn.write_good(&answer)
    }
}

/// Even connections answer every call well; odd ones run `bad` once they have a first request.
fn half_hostile(grpc: bool, bad: impl Fn(&mut H2, u32) + Send + Sync + 'static) -> Hostile {
    Hostile::start(move |conn| {
        let odd = conn.index % 2 == 1;
        let Some(mut h2) = H2::accept(conn, &[]) else { return };
        while let Some(stream) = h2.next_request() {
            if odd {
                bad(&mut h2, stream);
                return;
            }
            if !h2.good(stream, grpc) {
                return;
            }
        }
    })
}

fn h2c(server: &Hostile) -> Vec<String> {
    vec!["--http2".into(), "--connections".into(), "2".into(), server.url("/x")]
}

fn grpc(server: &Hostile) -> Vec<String> {
    let echo = common::repo().join("contract/proto/callbench/v1/echo.proto");
    vec![
        "--connections".into(),
        "2".into(),
        "--proto".into(),
        echo.to_string_lossy().into_owned(),
        "-d".into(),
        "{}".into(),
        format!("grpc://127.0.0.1:{}/callbench.v1.Echo/Echo", server.port),
    ]
}

/// Runs against `server` with `target` arguments; checks the bounds and the good answers' count.
fn run(server: &Hostile, target: &[String], extra: &[&str]) -> Measured {
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    checked_load(server, &[RUN.as_slice(), extra, &target].concat(), MEMORY_BOUND_KIB)
}

#[test]
fn a_frame_beyond_the_size_we_allow_breaks_the_protocol() {
    for grpc_call in [false, true] {
        let server = half_hostile(grpc_call, |h2, stream| {
            // A DATA frame announcing 16 MiB - 1 (we allow 1 MiB), and some of it.
            let mut huge = vec![0xff, 0xff, 0xff, DATA, 0];
            huge.extend_from_slice(&stream.to_be_bytes());
            huge.extend(vec![0u8; 64 * 1024]);
            h2.conn.write(&frame(HEADERS, END_HEADERS, stream, &[STATUS_200]));
            h2.conn.write(&huge);
            h2.conn.hold();
        });
        let target = if grpc_call { grpc(&server) } else { h2c(&server) };
        assert_failed_as(&run(&server, &target, &[]), "protocol");
    }
}

/// A header block of `:status: 200`, then one one-byte field added to the HPACK table and named
/// by a one-byte index `refs` times: a field per byte on the wire, each 33 bytes of header list
/// as RFC 9113 §6.5.2 counts it.
fn tiny_fields(refs: usize) -> Vec<u8> {
    [&[STATUS_200, 0x40, 1, b'a', 0][..], &vec![0x80 | 62; refs]].concat()
}

/// 64 calls in flight: the bound above, plus 1 MiB for each of 64 callers, what a caller holds of
/// its own (bench/results/code-notes-2026-12.md#what-a-caller-holds) or a header list at its limit
/// (1 MiB as RFC 9113 counts it, less in memory).
const MANY_STREAMS_BOUND_KIB: u64 = MEMORY_BOUND_KIB + 64 * 1024;

/// 64 calls at once, 1 s, over two connections, one of them hostile.
fn many_streams(server: &Hostile) -> Measured {
    let target = h2c(server);
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    let m = checked_load(
        server,
        &[&["-z", "1s", "--timeout", "1s", "-c", "64"][..], &target].concat(),
        MANY_STREAMS_BOUND_KIB,
    );
    eprintln!("peak RSS at -c 64: {} KiB", m.peak_rss_kib);
    m
}

/// Odd connections answer every stream with the head `head` and never end it; even ones answer well.
fn endless_heads(head: Vec<u8>) -> Hostile {
    Hostile::start(move |conn| {
        let odd = conn.index % 2 == 1;
        let Some(mut h2) = H2::accept(conn, &[]) else { return };
        while let Some(stream) = h2.next_request() {
            let sent = match odd {
                true => h2.conn.write(&frame(HEADERS, END_HEADERS, stream, &head)),
                false => h2.good(stream, false),
            };
            if !sent {
                return;
            }
        }
    })
}

#[test]
fn a_header_list_of_a_million_tiny_fields_breaks_the_protocol() {
    // 1 MiB of one-byte fields on every stream: 33 MiB of header list each.
    let server = endless_heads(tiny_fields((1 << 20) - 64));
    assert_failed_as(&many_streams(&server), "protocol");
}

#[test]
fn header_lists_just_under_the_limit_on_every_stream_stay_bounded() {
    // Every stream of the hostile connection gets a head of 31,000 tiny fields (1 MB of header
    // list, under the 1 MiB limit) and never an end: each call holds one until its timeout.
    let server = endless_heads(tiny_fields(31_000));
    assert_failed_as(&many_streams(&server), "timeout");
}

#[test]
fn a_settings_flood_from_a_server_that_never_reads_is_cut_off() {
    let server = half_hostile(false, |h2, _| {
        // SETTINGS by the thousand, never reading the acknowledgements they ask for.
        let burst: Vec<u8> = (0..1024).flat_map(|_| frame(SETTINGS, 0, 0, &[])).collect();
        while h2.conn.write(&burst) {}
    });
    assert_failed_as(&run(&server, &h2c(&server), &[]), "protocol");
}

#[test]
fn a_window_that_never_opens_times_out() {
    // The server allows no request body on any stream (SETTINGS_INITIAL_WINDOW_SIZE 0) and never
    // updates it: a gRPC call, which always has a body, cannot be sent.
    let server = Hostile::start(|conn| {
        let odd = conn.index % 2 == 1;
        let settings: &[u8] = if odd { &[0, 4, 0, 0, 0, 0] } else { &[] };
        let Some(mut h2) = H2::accept(conn, settings) else { return };
        if odd {
            h2.conn.hold();
            return;
        }
        while let Some(stream) = h2.next_request() {
            if !h2.good(stream, true) {
                return;
            }
        }
    });
    assert_failed_as(&run(&server, &grpc(&server), &[]), "timeout");
}

#[test]
fn a_reset_on_every_other_call_fails_exactly_those_calls() {
    for grpc_call in [false, true] {
        let resets = Arc::new(AtomicU64::new(0));
        let counted = resets.clone();
        let server = Hostile::start(move |conn| {
            let Some(mut h2) = H2::accept(conn, &[]) else { return };
            let mut n = 0u64;
            while let Some(stream) = h2.next_request() {
                n += 1;
                let sent = if n.is_multiple_of(2) {
                    counted.fetch_add(1, Ordering::Relaxed);
                    h2.conn.write(&frame(RST_STREAM, 0, stream, &2u32.to_be_bytes()))
                // INTERNAL_ERROR
                } else {
                    h2.good(stream, grpc_call)
                };
                if !sent {
                    return;
                }
            }
        });
        let target = if grpc_call { grpc(&server) } else { h2c(&server) };
        let before = resets.load(Ordering::Relaxed);
        let m = run(&server, &target, &[]);
        assert_failed_as(&m, "reset_2");
        assert_eq!(
            m.report["calls"]["errors"].as_u64().unwrap(),
            resets.load(Ordering::Relaxed) - before,
            "{:#}",
            m.report
        );
    }
}

#[test]
fn goaway_in_the_middle_of_a_run_costs_no_call() {
    for grpc_call in [false, true] {
        let server = Hostile::start(move |conn| {
            let Some(mut h2) = H2::accept(conn, &[]) else { return };
            let mut answered = 0;
            while let Some(stream) = h2.next_request() {
                if !h2.good(stream, grpc_call) {
                    return;
                }
                answered += 1;
                if answered == 500 {
                    // Processed up to this stream; any other open one was not and is sent again.
                    // Then it reads on until the client closes (a lingering close, as nginx does): a
                    // socket closed with unread requests in it would reset, losing the GOAWAY.
                    let goaway = [stream.to_be_bytes(), 0u32.to_be_bytes()].concat();
                    h2.conn.write(&frame(GOAWAY, 0, 0, &goaway));
                    h2.conn.hold();
                    return;
                }
            }
        });
        let target = if grpc_call { grpc(&server) } else { h2c(&server) };
        let m = run(&server, &target, &[]);
        common::assert_all_ok(&m.report, server.good());
        assert!(m.report["goaways"].as_u64().unwrap() >= 1, "{:#}", m.report);
    }
}

#[test]
fn a_connection_closed_in_the_middle_of_a_frame_fails_as_io() {
    for grpc_call in [false, true] {
        let server = half_hostile(grpc_call, |h2, stream| {
            let answer = frame(HEADERS, END_HEADERS, stream, &[STATUS_200]);
            h2.conn.write(&answer[..answer.len() - 1]);
        });
        let target = if grpc_call { grpc(&server) } else { h2c(&server) };
        assert_failed_as(&run(&server, &target, &[]), "io");
    }
}

#[test]
fn a_grpc_gzip_bomb_is_refused_at_the_limit() {
    // 1 GiB of zeros in one gzip-compressed gRPC message: about 1 MiB.
    let gz = gzip_bomb();
    let bomb = [&[1u8][..], &(gz.len() as u32).to_be_bytes(), gz].concat();
    // Odd connections answer every call with the bomb: 1 MiB on the wire, 1 GiB inflated.
    let server = Hostile::start(move |conn| {
        let odd = conn.index % 2 == 1;
        let Some(mut h2) = H2::accept(conn, &[]) else { return };
        while let Some(stream) = h2.next_request() {
            if !odd {
                if !h2.good(stream, true) {
                    return;
                }
                continue;
            }
            let head =
                [&[STATUS_200][..], &literal("content-type", "application/grpc"), &literal("grpc-encoding", "gzip")]
                    .concat();
            let mut answer = frame(HEADERS, END_HEADERS, stream, &head);
            for part in bomb.chunks(16 * 1024) {
                answer.extend(frame(DATA, 0, stream, part));
            }
            answer.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &literal("grpc-status", "0")));
            if !h2.conn.write(&answer) {
                return;
            }
        }
    });
    assert_failed_as(&run(&server, &grpc(&server), &["--gzip", "--expect-body", "{}"]), "protocol");
}

#[test]
fn a_compressed_grpc_message_without_an_encoding_breaks_the_protocol() {
    for encoding in [None, Some("identity")] {
        // Odd connections answer every call with a message flagged compressed, in an answer that
        // names no compression (or `identity`): gRPC's INTERNAL, whatever the message holds.
        let server = Hostile::start(move |conn| {
            let odd = conn.index % 2 == 1;
            let Some(mut h2) = H2::accept(conn, &[]) else { return };
            while let Some(stream) = h2.next_request() {
                if !odd {
                    if !h2.good(stream, true) {
                        return;
                    }
                    continue;
                }
                let mut head = [&[STATUS_200][..], &literal("content-type", "application/grpc")].concat();
                if let Some(name) = encoding {
                    head.extend(literal("grpc-encoding", name));
                }
                let answer = [
                    frame(HEADERS, END_HEADERS, stream, &head),
                    frame(DATA, 0, stream, &[1, 0, 0, 0, 0]),
                    frame(HEADERS, END_HEADERS | END_STREAM, stream, &literal("grpc-status", "0")),
                ]
                .concat();
                if !h2.conn.write(&answer) {
                    return;
                }
            }
        });
        assert_failed_as(&run(&server, &grpc(&server), &[]), "protocol");
    }
}

/// Even connections answer every call well; odd ones answer every call with `bad(stream)`.
fn every_answer(grpc: bool, bad: impl Fn(u32) -> Vec<u8> + Send + Sync + 'static) -> Hostile {
    Hostile::start(move |conn| {
        let odd = conn.index % 2 == 1;
        let Some(mut h2) = H2::accept(conn, &[]) else { return };
        while let Some(stream) = h2.next_request() {
            let sent = if odd { h2.conn.write(&bad(stream)) } else { h2.good(stream, grpc) };
            if !sent {
                return;
            }
        }
    })
}

/// gRPC answers that break gRPC's rules, each of which grpc-go (and so ghz) reports as an error:
/// counted as protocol errors, never ok.
#[test]
fn grpc_answers_that_break_its_rules_are_errors() {
    let head = [&[STATUS_200][..], &literal("content-type", "application/grpc")].concat();
    let ok = literal("grpc-status", "0");
    let message = [0u8, 0, 0, 0, 0];
    type Answer = Box<dyn Fn(u32) -> Vec<u8> + Send + Sync>;
    let (h, o) = (head.clone(), ok.clone());
    let trailers_only_without_a_message: Answer =
        Box::new(move |s| frame(HEADERS, END_HEADERS | END_STREAM, s, &[&h[..], &o].concat()));
    let (h, o) = (head.clone(), ok.clone());
    let two_messages: Answer = Box::new(move |s| {
        [
            frame(HEADERS, END_HEADERS, s, &h),
            frame(DATA, 0, s, &[message, message].concat()),
            frame(HEADERS, END_HEADERS | END_STREAM, s, &o),
        ]
        .concat()
    });
    let (h, o) = (head.clone(), ok.clone());
    let status_in_the_head_then_a_message: Answer = Box::new(move |s| {
        [frame(HEADERS, END_HEADERS, s, &[&h[..], &o].concat()), frame(DATA, END_STREAM, s, &message)].concat()
    });
    let h = head.clone();
    let trailers_without_a_status: Answer = Box::new(move |s| {
        [
            frame(HEADERS, END_HEADERS, s, &h),
            frame(DATA, 0, s, &message),
            frame(HEADERS, END_HEADERS | END_STREAM, s, &literal("grpc-message", "fine")),
        ]
        .concat()
    });
    let o = ok.clone();
    let not_grpc: Answer = Box::new(move |s| {
        [
            frame(HEADERS, END_HEADERS, s, &[&[STATUS_200][..], &literal("content-type", "application/json")].concat()),
            frame(DATA, 0, s, &message),
            frame(HEADERS, END_HEADERS | END_STREAM, s, &o),
        ]
        .concat()
    });
    for (case, answer) in [
        ("an answer whose content-type is not gRPC's", not_grpc),
        ("trailers-only OK with no message", trailers_only_without_a_message),
        ("two messages to a unary call", two_messages),
        ("grpc-status in the head, a message, no trailers", status_in_the_head_then_a_message),
        ("trailers without grpc-status", trailers_without_a_status),
    ] {
        let server = every_answer(true, answer);
        let m = run(&server, &grpc(&server), &[]);
        eprintln!("{case}: {}", m.report["errors"]);
        assert_failed_as(&m, "protocol");
    }
}

/// An HTTP/2 answer whose DATA is shorter or longer than its content-length is malformed (RFC
/// 9113 §8.1.1), as HTTP/1.1 counts a short body: never ok.
#[test]
fn an_http2_body_that_disagrees_with_its_content_length_is_an_error() {
    for (length, body) in [("10", &b"abc"[..]), ("1", &b"abc"[..]), ("5", &b""[..])] {
        let server = every_answer(false, move |s| {
            let head = [&[STATUS_200][..], &literal("content-length", length)].concat();
            match body.is_empty() {
                true => frame(HEADERS, END_HEADERS | END_STREAM, s, &head),
                false => [frame(HEADERS, END_HEADERS, s, &head), frame(DATA, END_STREAM, s, body)].concat(),
            }
        });
        let m = run(&server, &h2c(&server), &[]);
        eprintln!("content-length {length}, {} bytes: {}", body.len(), m.report["errors"]);
        assert_failed_as(&m, "protocol");
    }
    // A HEAD's answer names the length of a body it does not send: every one ok.
    let server = Hostile::start(|conn| {
        let Some(mut h2) = H2::accept(conn, &[]) else { return };
        let head = [&[STATUS_200][..], &literal("content-length", "10")].concat();
        while let Some(stream) = h2.next_request() {
            if !h2.conn.write_good(&frame(HEADERS, END_HEADERS | END_STREAM, stream, &head)) {
                return;
            }
        }
    });
    let m = run(&server, &h2c(&server), &["-X", "HEAD"]);
    assert_eq!(m.report["calls"]["errors"], 0, "{:#}", m.report);
}
