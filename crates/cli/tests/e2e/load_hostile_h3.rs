//! End-to-end: `callbench load --http3` against HTTP/3 servers that misbehave (common::hostile_quic,
//! frames written by hand on quinn): frames whose length alone would grow the client without
//! bound, bodies at odds with their content-length, interim answers, GOAWAY, a set-up that never
//! finishes and refused 0-RTT. Each run ends in bounded time and memory, counts ok only the good
//! answers, and an answer that breaks a rule or a bound is an error.

use crate::common;

use common::hostile::{measured_load, Measured, TIME_BOUND};
use common::hostile_quic::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the client may hold against these servers: HTTP/3's bounds (a 1 MiB header section or
/// frame, 16 MiB of connection window) over a baseline that is about 20 MiB here.
const MEMORY_BOUND_KIB: u64 = 128 << 10;

/// `load --http3 -k -o json ARGS URL` for one second on two connections of four callers.
fn one_second(server: &HostileQuic, extra: &[&str]) -> Measured {
    let url = server.url("/");
    let args = [&["--http3", "-k", "-z", "1s", "-c", "4", "--connections", "2", "--timeout", "1s"], extra, &[&url]];
    measured_load(&args.concat())
}

fn assert_bounded(m: &Measured) {
    assert!(m.run.elapsed < TIME_BOUND, "ran {:?}:\n{}", m.run.elapsed, m.run.all());
    assert!(m.peak_rss_kib < MEMORY_BOUND_KIB, "peak RSS {} KiB:\n{}", m.peak_rss_kib, m.run.all());
}

fn errors_of(m: &Measured) -> Vec<String> {
    m.report["errors"].as_object().map(|e| e.keys().cloned().collect()).unwrap_or_default()
}

/// A server that answers every request on every connection with `answer`, counted good.
fn answering(settings: Settings, answer: Vec<u8>) -> HostileQuic {
    let answer = Arc::new(answer);
    HostileQuic::start(settings, move |conn| {
        let answer = answer.clone();
        async move {
            let _control = conn.control(&[]).await;
            while let Some((mut send, _recv)) = conn.request().await {
                conn.answer_good(&mut send, &answer).await;
            }
        }
    })
}

/// The server answers every request on its even connections well and on its odd ones with
/// `bad`'s bytes (the stream left open when `flood` is given: those bytes again and again).
fn half_bad(bad: Vec<u8>, flood: Option<Vec<u8>>) -> HostileQuic {
    let (bad, flood) = (Arc::new(bad), Arc::new(flood));
    HostileQuic::start(Settings::default(), move |conn| {
        let (bad, flood) = (bad.clone(), flood.clone());
        async move {
            let _control = conn.control(&[]).await;
            while let Some((mut send, _recv)) = conn.request().await {
                if conn.index % 2 == 0 {
                    conn.answer_good(&mut send, &good_answer(b"{}")).await;
                    continue;
                }
                let flood = flood.clone();
                let bad = bad.clone();
                tokio::spawn(async move {
                    if send.write_all(&bad).await.is_err() {
                        return;
                    }
                    match flood.as_ref() {
                        Some(chunk) => QuicConn::flood(&mut send, chunk, 1 << 30).await,
                        None => {
                            let _ = send.finish();
                        }
                    }
                });
            }
        }
    })
}

#[test]
fn answers_past_http3s_bounds_or_at_odds_with_their_length_are_errors() {
    let zeros = vec![0u8; 16 << 10];
    let cases = [
        // A header section that never ends: 1 GiB announced, sent for as long as the client reads.
        ("endless header section", frame_head(HEADERS, 1 << 30), Some(zeros.clone())),
        // A frame to ignore, over the 1 MiB any frame but DATA may have.
        ("endless reserved frame", [headers(STATUS_200, None), frame_head(RESERVED, 1 << 40)].concat(), Some(zeros)),
        // A body shorter than its content-length (RFC 9114 §4.1.2: malformed).
        ("short body", [headers(STATUS_200, Some(10)), frame(DATA, b"abc")].concat(), None),
        // And longer.
        ("long body", [headers(STATUS_200, Some(1)), frame(DATA, b"abc")].concat(), None),
    ];
    for (case, bad, flood) in cases {
        let server = half_bad(bad, flood);
        let m = one_second(&server, &[]);
        assert_eq!(m.run.code, Some(0), "{case}: {}", m.run.all());
        assert_bounded(&m);
        let ok = m.report["calls"]["ok"].as_u64().unwrap();
        assert_eq!(ok, server.good(), "{case}: every good answer is ok, and nothing else: {:#}", m.report);
        assert!(ok > 0, "{case}: the good connection was served: {:#}", m.report);
        assert_eq!(errors_of(&m), ["protocol"], "{case}: {:#}", m.report);
    }
}

/// A control stream that carries a frame without end, or frames without end: the client closes the
/// connection with H3_EXCESSIVE_LOAD, its memory bounded, instead of holding all it is sent.
#[test]
fn a_control_stream_without_end_closes_its_connection() {
    let huge = [frame_head(RESERVED, (1 << 62) - 1), vec![0; 16 << 10]].concat();
    let small = frame(RESERVED, &[0; 1000]);
    for (case, first, again) in
        [("one endless frame", huge.clone(), vec![0u8; 16 << 10]), ("endless frames", small.clone(), small)]
    {
        let (first, again) = (Arc::new(first), Arc::new(again));
        let server = HostileQuic::start(Settings::default(), move |conn| {
            let (first, again) = (first.clone(), again.clone());
            async move {
                let Some(mut control) = conn.control(&first).await else { return };
                QuicConn::flood(&mut control, &again, 1 << 30).await;
            }
        });
        let m = one_second(&server, &[]);
        assert_bounded(&m);
        assert_eq!(m.report["calls"]["ok"].as_u64(), Some(0), "{case}: {:#}", m.report);
        let ended = server.wait_ended(Duration::from_secs(10));
        let excessive = ended.iter().filter(|(_, e)| closed_with(e, 0x107)).count();
        assert!(excessive > 0, "{case}: some connection closed with H3_EXCESSIVE_LOAD: {ended:?}\n{:#}", m.report);
    }
}

fn closed_with(e: &quinn::ConnectionError, code: u32) -> bool {
    matches!(e, quinn::ConnectionError::ApplicationClosed(c) if c.error_code == code.into())
}

/// 103 Early Hints before the final answer: skipped, the call judged by its 200.
#[test]
fn interim_answers_come_before_the_final_one() {
    let interim = [headers(STATUS_103, None), headers(STATUS_103, None), good_answer(b"{}")].concat();
    let server = answering(Settings::default(), interim);
    let m = measured_load(&["--http3", "-k", "-n", "50", "-c", "2", &server.url("/")]);
    common::assert_all_ok(&m.report, 50);
}

/// A server that sends GOAWAY after ten answers on each connection and refuses every later
/// request there (H3_REQUEST_REJECTED) while keeping the connection alive: the calls move to a new
/// connection, each refused one sent again, none lost.
#[test]
fn a_goaway_moves_calls_to_a_new_connection() {
    let refused = Arc::new(AtomicU64::new(0));
    let counted = refused.clone();
    let server = HostileQuic::start(Settings::default(), move |conn| {
        let refused = counted.clone();
        async move {
            let Some(mut control) = conn.control(&[]).await else { return };
            let mut answered = 0;
            while let Some((mut send, mut recv)) = conn.request().await {
                if answered < 10 {
                    answered += 1;
                    conn.answer_good(&mut send, &good_answer(b"{}")).await;
                    if answered == 10 {
                        let next = u64::from(send.id()) + 4;
                        let _ = control.write_all(&frame(GOAWAY, &varint(next))).await;
                    }
                    continue;
                }
                refused.fetch_add(1, Ordering::Relaxed);
                let _ = send.reset(0x10b_u32.into());
                let _ = recv.stop(0x10b_u32.into());
            }
        }
    });
    let m = measured_load(&["--http3", "-k", "-n", "300", "-c", "4", "--connections", "1", &server.url("/")]);
    assert!(m.run.elapsed < TIME_BOUND, "ran {:?}:\n{}", m.run.elapsed, m.run.all());
    common::assert_all_ok(&m.report, 300);
    assert!(common::num(&m.report, "/connections_opened") >= 30.0, "ten calls a connection: {:#}", m.report);
    assert_eq!(common::num(&m.report, "/retries"), refused.load(Ordering::Relaxed) as f64, "{:#}", m.report);
}

/// A server that lets the client open no unidirectional stream after its first connection (the
/// probe's): HTTP/3's set-up waits for its control stream until the connect timeout, and the
/// client then closes the QUIC connection itself rather than leaving it open.
#[test]
fn an_http3_set_up_that_never_finishes_closes_its_connection() {
    let settings = Settings { starve_after_first: true, ..Settings::default() };
    let server = answering(settings, good_answer(b"{}"));
    let m = one_second(&server, &["--connect-timeout", "200ms"]);
    assert_bounded(&m);
    assert!(server.accepted() > 2, "the client tried again: {:#}", m.report);
    for (index, ended) in server.wait_ended(Duration::from_secs(10)) {
        if index == 0 {
            continue; // the probe's, set up and served
        }
        let closed_by_client = matches!(&ended, quinn::ConnectionError::ApplicationClosed(c)
            if c.reason.as_ref() == b"HTTP/3 set-up did not finish");
        assert!(closed_by_client, "connection {index} ended as {ended:?}, not closed by the client");
    }
}

/// A server that refuses every 0-RTT (a new ticket store for each connection): each call sent in
/// 0-RTT and refused is sent again, on a connection with a full handshake, and answered.
#[test]
fn a_refused_zero_rtt_call_is_sent_again() {
    let settings = Settings { forget_tickets: true, ..Settings::default() };
    let server = answering(settings, good_answer(b"{}"));
    let args = ["--http3", "-k", "--tls-resume", "--zero-rtt", "--new-connection-per-call", "-n", "20", "-c", "1"];
    let m = measured_load(&[&args[..], &[&server.url("/")]].concat());
    common::assert_all_ok(&m.report, 20);
    assert!(common::num(&m.report, "/retries") > 0.0, "some 0-RTT was refused and sent again: {:#}", m.report);
}
