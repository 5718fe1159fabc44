//! End-to-end: `callbench load` against HTTP/1.1 servers that misbehave (a hostile server of
//! ours, scripted per test). Every other connection is served well, the rest badly. For each: the
//! run ends within its duration plus one call timeout and a start-up grace, its memory stays under
//! `MEMORY_BOUND_KIB`, every failure is counted under its kind, the good answers are all counted ok
//! (the server's own count), and nothing panics.

use crate::common;

use common::hostile::{assert_failed_as, checked_load, gzip_bomb, measured_load, Conn, Hostile, Measured};
use std::time::Duration;

/// Each run: 1 s of calls, a call timeout of 1 s, two callers (two connections at a time).
const RUN: [&str; 6] = ["-z", "1s", "--timeout", "1s", "-c", "2"];
/// Peak RSS: the engine keeps at most 16 MiB of a checked body per call in flight, and drops
/// every other body as it arrives. The bound leaves room over what these runs peak at
/// (bench/results/code-notes-2026-12.md#peak-memory-of-hostile-http1-runs).
const MEMORY_BOUND_KIB: u64 = 64 * 1024;

const GOOD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

/// Even connections answer every request well; odd ones get `bad` after their first request.
fn half_hostile(bad: impl Fn(&mut Conn) + Send + Sync + 'static) -> Hostile {
    Hostile::start(move |mut conn| {
        while conn.read_request().is_some() {
            if conn.index % 2 == 1 {
                bad(&mut conn);
                return;
            }
            if !conn.write_good(GOOD) {
                return;
            }
        }
    })
}

/// Runs against `server`, checks the bounds and the count of good answers; gives the report.
fn run(server: &Hostile, extra: &[&str]) -> Measured {
    let url = server.url("/x");
    let args = [RUN.as_slice(), extra, &[url.as_str()]].concat();
    checked_load(server, &args, MEMORY_BOUND_KIB)
}

#[test]
fn a_body_that_never_ends_times_out_and_is_never_held() {
    let server = half_hostile(|conn| {
        let mut head = b"HTTP/1.1 200 OK\r\ncontent-length: 1000000000000\r\n\r\n".to_vec();
        head.extend(vec![b'x'; 64 * 1024]);
        let data = vec![b'x'; 64 * 1024];
        if conn.write(&head) {
            while conn.write(&data) {}
        }
    });
    // Kept for a check or not, nothing of it is held: --expect-body would keep a body, but one
    // announced beyond the limit fails at once.
    assert_failed_as(&run(&server, &[]), "timeout");
    assert_failed_as(&run(&server, &["--expect-body", "ok"]), "protocol");
}

#[test]
fn a_chunked_body_that_never_ends_times_out() {
    let server = half_hostile(|conn| {
        let chunk = [b"4000\r\n".as_slice(), &[b'y'; 0x4000], b"\r\n"].concat();
        if conn.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n") {
            while conn.write(&chunk) {}
        }
    });
    assert_failed_as(&run(&server, &[]), "timeout");
    // Checked, it is held only up to the limit, then refused.
    assert_failed_as(&run(&server, &["--expect-body", "ok"]), "protocol");
}

#[test]
fn headers_that_never_end_break_the_protocol() {
    let server = half_hostile(|conn| {
        if conn.write(b"HTTP/1.1 200 OK\r\n") {
            while conn.write(b"x-more: and more and more\r\n") {}
        }
    });
    assert_failed_as(&run(&server, &[]), "protocol");
}

#[test]
fn a_gzip_bomb_is_refused_at_the_limit() {
    let bomb = gzip_bomb();
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let server = half_hostile(move |conn| {
        let head = format!("HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: {}\r\n\r\n", bomb.len());
        conn.write(head.as_bytes());
        conn.write(bomb);
    });
    assert_failed_as(&run(&server, &["--gzip", "--expect-body", "ok"]), "protocol");
}

#[test]
fn a_content_length_longer_than_the_body_fails_when_the_server_closes() {
    let server = half_hostile(|conn| {
        conn.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort");
    });
    assert_failed_as(&run(&server, &[]), "io");
}

#[test]
fn a_content_length_shorter_than_the_body_breaks_the_next_answer() {
    // The 5 bytes past the announced 2 are read as the next answer's head: not HTTP.
    let server = Hostile::start(|mut conn| {
        while conn.read_request().is_some() {
            let ok = if conn.index % 2 == 1 {
                conn.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok+junk")
            } else {
                conn.write_good(GOOD)
            };
            if !ok {
                return;
            }
        }
    });
    let m = measured_load(&[RUN.as_slice(), &[server.url("/x").as_str()]].concat());
    assert_eq!(m.run.code, Some(0), "{}", m.run.all());
    // The odd connections' first answers looked right and count ok; each second one fails.
    let ok = m.report["calls"]["ok"].as_u64().unwrap();
    assert!(ok > server.good(), "{:#}", m.report);
    assert_failed_as(&m, "protocol");
}

#[test]
fn chunk_sizes_that_are_not_sizes_break_the_protocol() {
    for bad in ["zz\r\nhello\r\n0\r\n\r\n", "-1\r\n", "5\r\nhelloXX0\r\n\r\n", "10000000000000000\r\n"] {
        let server = half_hostile(move |conn| {
            conn.write(format!("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{bad}").as_bytes());
        });
        assert_failed_as(&run(&server, &[]), "protocol");
    }
}

#[test]
fn a_connection_closed_in_the_middle_of_a_head_fails_as_io() {
    let server = half_hostile(|conn| {
        conn.write(b"HTTP/1.1 200 O");
    });
    assert_failed_as(&run(&server, &[]), "io");
}

#[test]
fn a_server_that_never_answers_or_drips_times_out() {
    let silent = half_hostile(|conn| conn.hold());
    assert_failed_as(&run(&silent, &[]), "timeout");
    let dripping = half_hostile(|conn| {
        // One byte per 300 ms (the server's pace, not a wait for anything): 38 bytes take 11 s.
        for byte in GOOD {
            if !conn.write(&[*byte]) {
                return;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    assert_failed_as(&run(&dripping, &[]), "timeout");
}

#[test]
fn framing_fields_at_odds_break_the_protocol() {
    // Each answer is whole by one of its fields, as a lenient client would read it.
    for bad in [
        "content-length: 5\r\ncontent-length: 2\r\n\r\nok",
        "content-length: 2\r\ncontent-length: 5\r\n\r\nokok!",
        "transfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "transfer-encoding: gzip\r\ncontent-length: 2\r\n\r\nok",
    ] {
        let server = half_hostile(move |conn| {
            conn.write(format!("HTTP/1.1 200 OK\r\n{bad}").as_bytes());
        });
        assert_failed_as(&run(&server, &[]), "protocol");
    }
}

#[test]
fn a_final_coding_other_than_chunked_runs_to_the_close() {
    // `xchunked` is not `chunked`: the body is what comes before the close (not a chunk), and
    // counts ok.
    let server = Hostile::start(|mut conn| {
        if conn.read_request().is_some() {
            conn.write_good(b"HTTP/1.1 200 OK\r\ntransfer-encoding: xchunked\r\n\r\nok");
        }
    });
    let m = run(&server, &[]);
    assert_eq!(m.report["calls"]["errors"].as_u64(), Some(0), "{:#}", m.report);
}
