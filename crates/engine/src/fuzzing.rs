//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every build but
//! theirs): each hands arbitrary server bytes to one of the decoders the engine wrote, through
//! the code a run uses, and checks what must hold whatever the bytes: the same answer whether the
//! bytes come whole or in pieces, nothing kept past the limits, no wait on bytes already there.

use crate::grpc::Messages;
use crate::h2client::hpack::Decoder;
use crate::http1::chunked::Chunked;
use crate::limits::MAX_KEPT_BODY;

mod expand;
mod h2;
mod pieces;
mod raw;
#[cfg(test)]
mod tests;

pub use crate::h2client::check_round_trip as hpack_round_trip;
pub use expand::{expand, MARK};

/// How far each target's input expands ([`expand`]): past the caps it guards and no further, as
/// every byte more is time that each input costs the fuzzer.
pub mod most {
    use crate::limits::{MAX_KEPT_BODY, MAX_TRAILERS};
    /// HTTP/1.1 answers and gRPC messages: a kept body or message past its cap.
    pub const KEPT: usize = MAX_KEPT_BODY + (1 << 20);
    /// A chunked body: a size line and a trailer section past theirs.
    pub const CHUNKED: usize = 2 * MAX_TRAILERS;
    /// The raw echo: 16 calls of the largest message and the room read beyond each.
    pub const RAW: usize = 16 * ((64 << 10) + crate::raw::ROOM);
    /// HTTP/2: the 16 MiB connection window, and a flood of small frames past 16 MiB held.
    pub const H2: usize = 20 << 20;
}
pub use h2::{h2_connection, H2Run};
pub use pieces::Pieces;
use pieces::{at_once, piece_size};
pub use raw::raw_echo;

pub use crate::http1::Http1Answer;

/// Reads up to 16 pipelined HTTP/1.1 answers from `data` as a run reads them (each body kept
/// for a check when `keep_body`, inflated when it says gzip), the bytes coming `step` at a time.
/// The answers must be the same as when the bytes come whole.
pub fn http1_answers(data: &[u8], step: usize, head_request: bool, keep_body: bool) -> Vec<Http1Answer> {
    let read = |step| at_once(crate::http1::read_answers(Pieces::new(data, step), head_request, keep_body));
    let answers = read(step);
    assert_eq!(answers, read(usize::MAX), "the answers changed with the bytes' arrival in pieces of {step}");
    answers
}

/// A chunked body decoded as the HTTP/1.1 reader decodes it (what `feed` used is dropped, the
/// rest waits for more), bytes coming `step` at a time: the same data, end and failure as whole.
/// Gives whether the whole ended the body, or None when it broke a rule or a limit.
pub fn chunked(data: &[u8], step: usize) -> Option<bool> {
    let decode = |step: usize| {
        let (mut decoder, mut out, mut held) = (Chunked::default(), Vec::new(), Vec::new());
        for piece in data.chunks(piece_size(step, data.len())) {
            held.extend_from_slice(piece);
            match decoder.feed(&held, |d| out.extend_from_slice(d)) {
                Ok((used, done)) => {
                    assert!(used <= held.len());
                    held.drain(..used);
                    if done {
                        return (Ok(true), out, held.len());
                    }
                }
                Err(broken) => return (Err(broken), out, held.len()),
            }
            // What waits for more is at most a size line or a trailer section's unfinished line.
            let most = crate::limits::MAX_TRAILERS.max(crate::limits::MAX_CHUNK_LINE) + 2;
            assert!(held.len() <= most, "held {} bytes", held.len());
        }
        (Ok(false), out, held.len())
    };
    let (whole, pieces) = (decode(usize::MAX), decode(step));
    assert_eq!(whole.0, pieces.0, "pieces of {step}");
    if whole.0.is_ok() {
        // A failure may come at different points of the data; success must not.
        assert_eq!(whole.1, pieces.1, "pieces of {step}");
    }
    whole.0.ok()
}

/// gRPC messages split from DATA as it arrives `step` at a time: the same count, payload and
/// kept first message as from the whole, and no kept message past the limit. Gives what the
/// whole came to: the messages' count, their payload, whether they broke a rule or the limit.
pub fn grpc_messages(data: &[u8], step: usize, keep_first: bool) -> (u64, u64, bool) {
    let split = |step: usize| {
        let mut m = Messages::default();
        for piece in data.chunks(piece_size(step, data.len())) {
            m.push(piece, keep_first);
        }
        if let Some((compressed, first)) = &m.first {
            assert!(first.len() <= MAX_KEPT_BODY);
            if *compressed && m.complete() {
                let _ = crate::request::gunzip(first);
            }
        }
        (m.count, m.payload, m.broken, m.complete(), m.first)
    };
    let whole = split(usize::MAX);
    assert_eq!(whole, split(step), "pieces of {step}");
    (whole.0, whole.1, whole.2)
}

/// HPACK blocks in sequence on one connection's decoder, each `[len, block...]`; stops at the
/// first block refused (the connection would end there).
pub fn hpack_decode(mut data: &[u8]) {
    let mut decoder = Decoder::default();
    while let Some((&len, rest)) = data.split_first() {
        let (block, rest) = rest.split_at((len as usize).min(rest.len()));
        data = rest;
        let mut size = 0;
        if decoder.decode(block, |n, v| size += n.len() + v.len()).is_err() {
            return;
        }
    }
}

/// One gRPC answer judged by the rules a call is judged by ([`crate::grpc_rules::verdict`]), its
/// head, trailers and messages as given: an ok verdict holds every rule, restated here apart from
/// the code (an HTTP 200, a gRPC content-type, status 0 in the trailers or, when no DATA came, in
/// a trailers-only head, data that ended whole, a compressed message only under a named encoding,
/// exactly one message for a unary or client-streaming method), and a failing status is not 0.
pub fn grpc_rules(
    shape: crate::grpc::Shape,
    http_status: u16,
    head: &crate::h2pool::HeaderList,
    trailers: Option<&crate::h2pool::HeaderList>,
    received: (u64, bool, bool, bool),
) -> Result<(), crate::record::ErrorKind> {
    use crate::grpc::Shape;
    use crate::record::ErrorKind;
    let (count, any_data, whole, compressed) = received;
    let received = crate::grpc_rules::Received { count, any_data, whole, compressed };
    let verdict = crate::grpc_rules::verdict(shape, http_status, head, trailers, received);
    if let Err(ErrorKind::GrpcStatus(code)) = verdict {
        assert_ne!(code, 0, "status 0 is no failure");
    }
    if verdict.is_ok() {
        let text = |value: &[u8]| String::from_utf8_lossy(value).trim().to_ascii_lowercase();
        assert_eq!(http_status, 200);
        let content_type = head.get("content-type").map(text).unwrap_or_default();
        let subtype = content_type.strip_prefix("application/grpc");
        assert!(subtype.is_some_and(|rest| rest.is_empty() || rest.starts_with(['+', ';'])), "{content_type:?}");
        let status = match (trailers, any_data) {
            (Some(trailers), _) => trailers.get("grpc-status"),
            (None, false) => head.get("grpc-status"),
            (None, true) => None,
        };
        assert_eq!(status.map(text).and_then(|s| s.parse::<i64>().ok()), Some(0), "ok with status {status:?}");
        assert!(whole, "ok with data that did not end whole");
        let encoding = head.get("grpc-encoding").map(text);
        assert!(!compressed || encoding.as_deref().is_some_and(|e| e != "identity"), "compressed under {encoding:?}");
        if matches!(shape, Shape::Unary | Shape::ClientStreaming) {
            assert_eq!(count, 1, "a {} answer of {count} messages", shape.name());
        }
    }
    verdict
}
