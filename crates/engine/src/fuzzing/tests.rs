//! The inputs that take each fuzz target to the caps it guards, in the targets' own format (the
//! seeds `cap-*` in `fuzz/seeds/`), and what each must come to. `CALLBENCH_FUZZ_SEEDS=DIR` writes
//! them as `DIR/TARGET/cap-NAME`.

use super::*;
use crate::record::ErrorKind;

const MIB: usize = 1 << 20;

/// A seed's name, its bytes, and what it must come to.
type Input<T> = (&'static str, Vec<u8>, T);

/// Repeats the last `length` bytes `count` more times, once expanded.
fn rep(count: usize, length: usize) -> Vec<u8> {
    assert!(count < 1 << 24 && length < 1 << 24, "three bytes each");
    [&MARK[..], &count.to_be_bytes()[5..], &length.to_be_bytes()[5..]].concat()
}

/// `n` bytes `b` (once expanded).
fn run(b: u8, n: usize) -> Vec<u8> {
    let (mut out, mut left) = (vec![b], n - 1);
    while left > 0 {
        let count = left.min((1 << 24) - 1);
        out.extend(rep(count, 1));
        left -= count;
    }
    out
}

/// An HTTP/2 frame head.
fn head(len: usize, kind: u8, flags: u8, stream: u32) -> Vec<u8> {
    let mut h = (len as u32).to_be_bytes()[1..].to_vec();
    h.extend_from_slice(&[kind, flags]);
    h.extend_from_slice(&stream.to_be_bytes());
    h
}

/// HEADERS answering `stream` with `:status 200`, the stream left open.
fn answer(stream: u32) -> Vec<u8> {
    [head(1, 1, 0x4, stream), vec![0x88]].concat()
}

/// DATA of `len` zero bytes on `stream`.
fn data(len: usize, stream: u32) -> Vec<u8> {
    [head(len, 0, 0, stream), run(0, len)].concat()
}

/// Four DATA frames of 1 MiB: a stream's window.
fn window(stream: u32) -> Vec<u8> {
    [data(MIB, stream), rep(3, MIB + 9)].concat()
}

const FRAME_SIZE_ERROR: u32 = 0x6;
const PROTOCOL_ERROR: u32 = 0x1;
const FLOW_CONTROL_ERROR: u32 = 0x3;
const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The h2_connection inputs (byte 0: whole), with the GOAWAY each must bring and the data the
/// first call must have taken.
fn h2_inputs() -> Vec<(&'static str, Vec<u8>, Option<u32>, u64)> {
    // A 4,000-byte field added to the table, then 300 one-byte references to it: 1.2 MB decoded.
    let bomb = [vec![0x88, 0x40, 0x01, b'x', 0x7f, 0xa1, 0x1e], run(b'a', 4000), run(0xbe, 300)].concat();
    let bomb_len = 7 + 4000 + 300;
    vec![
        ("frame-over-1mib", [vec![0], head(MIB + 1, 0, 0, 1)].concat(), Some(FRAME_SIZE_ERROR), 0),
        ("data-of-1mib", [vec![0], answer(1), data(MIB, 1)].concat(), None, MIB as u64),
        (
            "header-block-over-1mib",
            [vec![0], head(1, 1, 0, 1), vec![0x88], head(MIB, 9, 0, 1), run(0, MIB), head(1, 9, 0x4, 1), vec![0]]
                .concat(),
            Some(PROTOCOL_ERROR),
            0,
        ),
        ("header-list-over-1mib", [vec![0], head(bomb_len, 1, 0x4, 1), bomb].concat(), Some(PROTOCOL_ERROR), 0),
        ("stream-window", [vec![0], answer(7), window(7), data(1, 7)].concat(), Some(FLOW_CONTROL_ERROR), 0),
        (
            "connection-window",
            [vec![0], answer(7), window(7), answer(9), window(9), answer(11), window(11), answer(13), window(13)]
                .into_iter()
                .chain([answer(1), data(1, 1)])
                .collect::<Vec<_>>()
                .concat(),
            Some(FLOW_CONTROL_ERROR),
            0,
        ),
        (
            "ping-flood",
            [vec![0], head(8, 6, 0, 0), vec![0; 8], rep(1_200_000, 17)].concat(),
            Some(ENHANCE_YOUR_CALM),
            0,
        ),
    ]
}

#[test]
fn h2_inputs_reach_the_connection_caps() {
    for (name, input, goaway, first) in h2_inputs() {
        let run = h2_connection(expand(&input[1..], most::H2).into_owned().into(), input[0] as usize);
        assert_eq!(run.goaway, goaway, "{name}: {run:?}");
        assert_eq!(run.received[0], first, "{name}: {run:?}");
    }
}

fn http1_inputs() -> Vec<Input<Http1Answer>> {
    let keep = vec![2, 0];
    vec![
        (
            "kept-body-of-16mib",
            [keep.clone(), b"HTTP/1.1 200 OK\r\ncontent-length: 16777216\r\n\r\n".to_vec(), run(b'a', 16 * MIB)]
                .concat(),
            Ok((200, 16 * MIB as u64)),
        ),
        (
            "kept-until-close-over-16mib",
            [keep.clone(), b"HTTP/1.1 200 OK\r\n\r\n".to_vec(), run(b'a', 16 * MIB + 1)].concat(),
            Err(ErrorKind::Protocol),
        ),
        (
            "kept-chunked-over-16mib",
            [
                keep,
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1000001\r\n".to_vec(),
                run(b'a', 16 * MIB + 1),
            ]
            .concat(),
            Err(ErrorKind::Protocol),
        ),
    ]
}

#[test]
fn http1_inputs_reach_the_kept_body_cap() {
    for (name, input, first) in http1_inputs() {
        let answers = http1_answers(&expand(&input[2..], most::KEPT), usize::MAX, false, true);
        assert_eq!(answers[0], first, "{name}");
    }
}

fn chunked_inputs() -> Vec<Input<Option<bool>>> {
    vec![
        (
            "chunk-of-100kib",
            [b"\x0019000\r\n".to_vec(), run(b'a', 0x19000), b"\r\n0\r\n\r\n".to_vec()].concat(),
            Some(true),
        ),
        ("chunk-line-over-4kib", [b"\x001;".to_vec(), run(b'a', 5000)].concat(), None),
        ("trailers-over-64kib", [b"\x000\r\nx: ".to_vec(), run(b'a', 70_000)].concat(), None),
    ]
}

#[test]
fn chunked_inputs_reach_the_line_caps() {
    for (name, input, outcome) in chunked_inputs() {
        assert_eq!(chunked(&expand(&input[1..], most::CHUNKED), usize::MAX), outcome, "{name}");
    }
}

fn grpc_inputs() -> Vec<Input<(u64, u64, bool)>> {
    let m = 16 * MIB as u64;
    vec![
        ("kept-message-of-16mib", [vec![0x80, 0, 1, 0, 0, 0], run(b'a', 16 * MIB)].concat(), (1, m, false)),
        ("kept-message-over-16mib", [vec![0x80, 0, 1, 0, 0, 1], run(b'a', 16 * MIB + 1)].concat(), (0, 0, true)),
    ]
}

#[test]
fn grpc_inputs_reach_the_kept_message_cap() {
    for (name, input, outcome) in grpc_inputs() {
        assert_eq!(grpc_messages(&expand(&input[1..], most::KEPT), usize::MAX, true), outcome, "{name}");
    }
}

#[test]
fn an_echo_is_ok_only_when_it_is_the_message() {
    use crate::record::Outcome;
    let twice = b"abcdabcd";
    assert_eq!(raw_echo(twice, 4, 4), [Outcome::Ok, Outcome::Ok, Outcome::Error(ErrorKind::Io)]);
    assert_eq!(raw_echo(b"abcx", 1, 4), [Outcome::Error(ErrorKind::Validation)]);
    assert_eq!(raw_echo(b"abcda", usize::MAX, 4), [Outcome::Error(ErrorKind::Validation)], "more in one read");
}

#[test]
fn write_the_seeds_when_asked() {
    let Some(dir) = std::env::var_os("CALLBENCH_FUZZ_SEEDS") else { return };
    let dir = std::path::PathBuf::from(dir);
    let write = |target: &str, name: &str, input: &[u8]| {
        std::fs::create_dir_all(dir.join(target)).unwrap();
        std::fs::write(dir.join(target).join(format!("cap-{name}")), input).unwrap();
    };
    h2_inputs().iter().for_each(|i| write("h2_connection", i.0, &i.1));
    http1_inputs().iter().for_each(|i| write("http1_answers", i.0, &i.1));
    chunked_inputs().iter().for_each(|i| write("chunked", i.0, &i.1));
    grpc_inputs().iter().for_each(|i| write("grpc_messages", i.0, &i.1));
}

#[test]
fn a_head_read_a_byte_at_a_time_is_the_head_read_whole() {
    // Long lines past the first KiB: parsed again only as a line ends, and never past the cap.
    let long = vec![b'a'; 30_000];
    let head = [b"HTTP/1.1 200 OK\r\nx-a: ".to_vec(), long.clone(), b"\r\nx-b: ".to_vec(), long.clone()].concat();
    let answer = [head.clone(), b"\r\ncontent-length: 2\r\n\r\nok".to_vec()].concat();
    assert_eq!(http1_answers(&answer, 1, false, true), [Ok((200, 2)), Err(ErrorKind::Io)], "then the end");
    let over = [head, b"\r\nx-c: ".to_vec(), vec![b'a'; 10_000]].concat();
    assert_eq!(http1_answers(&over, 1, false, true), [Err(ErrorKind::Protocol)]);
    // A broken status line is broken at once, and still so when the server closes on it.
    for broken in [&b"HTTP/1.1 2x0 OK\r\n"[..], b"HTTP/1.1 2x0", b"\x00\x01"] {
        assert_eq!(http1_answers(broken, 1, false, false), [Err(ErrorKind::Protocol)], "{broken:?}");
    }
}
