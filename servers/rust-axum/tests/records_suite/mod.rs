//! The records routes of a Rust REST server, checked against its real binary over raw HTTP/1.1
//! (uploads sent chunked, cut mid-line, answers read as they stream). rust-axum and rust-actix
//! both run it (`tests/records.rs`), so the two answer alike.

mod http;

use callbench_serverkit::records::{DownloadChunks, MAX_LINE_BYTES, MAX_UPLOAD_BYTES};
use callbench_testkit::server::Server;
use callbench_workloads::records::UploadSummary;
use http::{Conn, Reply};

const NDJSON: &str = "application/x-ndjson";

/// The REST JSON of a summary, as both servers write it.
fn summary_json(s: UploadSummary) -> String {
    format!(
        r#"{{"count":{},"activeCount":{},"firstId":{},"lastId":{},"sampleCount":{}}}"#,
        s.count, s.active_count, s.first_id, s.last_id, s.sample_count
    )
}

/// `n` records as NDJSON lines (the download's own records, `\n` after each).
fn lines(n: usize) -> Vec<u8> {
    DownloadChunks::new(n).flatten().collect()
}

fn summary_of(n: usize) -> UploadSummary {
    let records: Vec<_> = (0..n).map(callbench_workloads::records::downloaded).collect();
    UploadSummary::of(&records).expect("valid records")
}

fn assert_summary(reply: &Reply, expected: UploadSummary) {
    assert_eq!((reply.status, reply.text()), (200, summary_json(expected)));
    assert_eq!(reply.header("content-type"), Some("application/json"));
}

pub fn batch_sums_up_one_json_body(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = Conn::open(&server);
    let records = String::from_utf8(lines(3)).expect("UTF-8").trim_end().replace('\n', ",");
    let body = format!(r#"{{"records":[{records}]}}"#);
    assert_summary(&conn.post("/records/batch", Some("application/json"), body.as_bytes()), summary_of(3));
    assert_summary(&conn.post("/records/batch", Some("application/json"), br#"{"records":[]}"#), summary_of(0));
    for bad in [&b"{}"[..], br#"{"records":[{"kind":"KIND_HUGE"}]}"#, br#"{"records":[{"id":"1"}]}"#, b"{"] {
        let reply = conn.post("/records/batch", Some("application/json"), bad);
        assert_eq!(reply.status, 400, "{}: {}", String::from_utf8_lossy(bad), reply.text());
    }
    assert_eq!(conn.post("/records/batch", Some(NDJSON), br#"{"records":[]}"#).status, 415);
}

pub fn upload_reads_ndjson_however_it_is_sent(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = Conn::open(&server);
    for n in [0, 1, 1000] {
        let body = lines(n);
        assert_summary(&conn.post("/records/upload", Some(NDJSON), &body), summary_of(n));
        // Chunked, in pieces that cut lines (and UTF-8-free JSON) anywhere.
        for size in [1, 7, 4096] {
            assert_summary(&conn.post_chunked("/records/upload", Some(NDJSON), &body, size), summary_of(n));
        }
    }
    // Blank lines are skipped, the last line may lack its `\n`, parameters are allowed.
    let mut body = b"\n".to_vec();
    body.extend(lines(2));
    body.extend(b"\r\n\n");
    body.extend(lines(3).split(|&b| b == b'\n').nth(2).expect("a third line"));
    let expected = UploadSummary { count: 3, active_count: 2, first_id: 1, last_id: 3, sample_count: 9 };
    assert_summary(
        &conn.post_chunked("/records/upload", Some("application/x-ndjson; charset=utf-8"), &body, 10),
        expected,
    );
}

pub fn upload_refuses_bad_lines_and_wrong_types_and_keeps_the_connection(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = Conn::open(&server);
    let bad_lines: [&[u8]; 4] = [br#"{"kind":"KIND_HUGE"}"#, br#"{"score":"1"}"#, b"not json", b"[1,"];
    for bad in bad_lines {
        let body = [&lines(1)[..], bad, b"\n", &lines(2)[..]].concat();
        let reply = conn.post_chunked("/records/upload", Some(NDJSON), &body, 16);
        assert_eq!(reply.status, 400, "{}: {}", String::from_utf8_lossy(bad), reply.text());
        assert!(reply.text().contains("INVALID_ARGUMENT"), "{}", reply.text());
    }
    for content_type in [Some("application/json"), Some("text/plain"), None] {
        let reply = conn.post("/records/upload", content_type, &lines(2));
        assert_eq!(reply.status, 415, "{content_type:?}");
        // A 415 may end the connection (the body was not read), if the answer says so.
        if reply.closes() {
            conn = Conn::open(&server);
        }
    }
    // After every refusal, the same connection (or a new one) still answers.
    assert_summary(&conn.post_chunked("/records/upload", Some(NDJSON), &lines(5), 100), summary_of(5));
}

pub fn upload_lines_up_to_4_mib_pass_and_limits_are_413(bin: &str) {
    let server = Server::start(bin, &[]);
    let line = |len: usize| {
        let mut line = br#"{"name":""#.to_vec();
        line.resize(len - 2, b'a');
        line.extend(br#""}"#);
        line
    };
    let mut conn = Conn::open(&server);
    let exact = [line(MAX_LINE_BYTES), b"\n".to_vec()].concat();
    let reply = conn.post_chunked("/records/upload", Some(NDJSON), &exact, 65536);
    assert_eq!((reply.status, reply.text().contains(r#""count":1"#)), (200, true), "{}", reply.text());

    let over = [line(MAX_LINE_BYTES + 1), b"\n".to_vec()].concat();
    let reply = Conn::open(&server).post_chunked("/records/upload", Some(NDJSON), &over, 65536);
    assert_eq!(reply.status, 413, "{}", reply.text());
    assert!(reply.closes(), "the rest is unread: the connection ends, and the answer says so");

    // Blank lines of almost 4 MiB each, past 64 MiB in all.
    let blank = [vec![b' '; MAX_LINE_BYTES - 1], b"\n".to_vec()].concat();
    let count = (MAX_UPLOAD_BYTES as usize).div_ceil(blank.len()) + 1;
    let reply = Conn::open(&server).post_chunked("/records/upload", Some(NDJSON), &blank.repeat(count), 1 << 20);
    assert_eq!(reply.status, 413, "{}", reply.text());
    assert!(reply.closes());

    // The server still answers.
    assert_summary(&Conn::open(&server).post("/records/upload", Some(NDJSON), &lines(2)), summary_of(2));
}

pub fn download_streams_count_lines(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = Conn::open(&server);
    for count in [0, 3, 100_000] {
        let reply = conn.get(&format!("/records?count={count}"));
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.header("content-type"), Some(NDJSON));
        assert_eq!(reply.header("transfer-encoding"), Some("chunked"), "written as it goes, not built whole first");
        assert_eq!(reply.body, lines(count), "count {count}");
    }
    for query in ["", "?count=", "?count=-1", "?count=100001", "?count=3.5", "?count=x", "?counts=3"] {
        let reply = conn.get(&format!("/records{query}"));
        assert_eq!(reply.status, 400, "{query}: {}", reply.text());
        assert!(reply.text().contains("INVALID_ARGUMENT"), "{}", reply.text());
    }
    assert_eq!(conn.post("/records?count=1", Some("application/json"), b"{}").status, 405);
}

pub fn download_over_http_1_0_ends_with_the_connection(bin: &str) {
    let server = Server::start(bin, &[]);
    let reply = Conn::open(&server).get_http_1_0("/records?count=2");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("transfer-encoding"), None);
    assert_eq!(reply.body, lines(2));
}
