//! Entry points for the fuzz targets `dynproto_wire` and `proto_editions` (feature `fuzzing`, off
//! in every build but theirs): what a server sends a reflection call (its gRPC framing,
//! grpc-status and grpc-message, its answers' file descriptors, within one resolution's bounds),
//! protoset files and Editions `.proto` files, fed arbitrary bytes. Each
//! gives an error or a result, never a panic, and checks what must hold beyond that.

use crate::wire::{check_headers, percent_decode, status, take_message, CallError, MAX_MESSAGE_BYTES};
use crate::DynprotoError;
use bytes::{Bytes, BytesMut};
use callbench_engine::h2pool::HeaderList;

/// Messages taken off a call's buffer as DATA arrives `step` bytes at a time: the same messages,
/// error, and bytes left waiting when none, as from the whole; and none past the cap.
pub fn messages(data: &[u8], step: usize) -> (Vec<Bytes>, Option<String>, usize) {
    let split = |step: usize| {
        let (mut buffer, mut messages) = (BytesMut::new(), Vec::new());
        for piece in data.chunks(step.max(1)) {
            buffer.extend_from_slice(piece);
            loop {
                match take_message(&mut buffer, MAX_MESSAGE_BYTES) {
                    Ok(Some(message)) => messages.push(message),
                    Ok(None) => break,
                    // The call ends there: what is left unread does not matter.
                    Err(e) => return (messages, Some(e.describe()), 0),
                }
            }
        }
        (messages, None, buffer.len())
    };
    let whole = split(usize::MAX);
    assert_eq!(whole, split(step), "pieces of {step}");
    assert!(whole.0.iter().all(|m| m.len() <= MAX_MESSAGE_BYTES));
    whole
}

/// An answer's head as a reflection call reads it: the HTTP status, content-type, grpc-status
/// and grpc-message given, whatever their bytes (the engine's client keeps what HPACK decodes). A
/// grpc-message without `%` reads as itself.
pub fn answer_head(http_status: u16, content_type: &[u8], grpc_status: &[u8], grpc_message: &[u8]) {
    let mut headers = HeaderList::default();
    for (name, value) in [("content-type", content_type), ("grpc-status", grpc_status), ("grpc-message", grpc_message)]
    {
        headers.push(name.as_bytes(), value);
    }
    let _ = check_headers(http_status, &headers).map_err(|e| e.describe());
    match status(&headers) {
        Some(Err(CallError::Status { code, .. })) => assert_ne!(code, 0, "OK is no error"),
        Some(Err(e)) => {
            let _ = e.describe();
        }
        Some(Ok(())) | None => {}
    }
    let decoded = percent_decode(grpc_message);
    if !grpc_message.contains(&b'%') {
        assert_eq!(decoded, String::from_utf8_lossy(grpc_message));
    }
}

/// A reflection answer's bytes, its files made into a pool: an error or a pool.
pub fn reflection_answer(bytes: &[u8]) -> Result<prost_reflect::DescriptorPool, DynprotoError> {
    crate::reflection::pool_of_answers(&[bytes])
}

/// Reflection answers one after the other, as one resolution reads them, within its bounds (no
/// answer decodes files it was not counted for): `[length (3 bytes, big-endian), answer]...`,
/// the last answer taking what is left, repeats expanded first (`callbench_engine::fuzzing::expand`),
/// to a little past the resolution's byte budget.
pub fn reflection_answers(data: &[u8]) -> Result<prost_reflect::DescriptorPool, DynprotoError> {
    let data = callbench_engine::fuzzing::expand(data, crate::reflection_budget::MAX_BYTES + (1 << 20));
    let mut answers = Vec::new();
    let mut rest = &data[..];
    while let [high, middle, low, tail @ ..] = rest {
        let length = (usize::from(*high) << 16 | usize::from(*middle) << 8 | usize::from(*low)).min(tail.len());
        answers.push(&tail[..length]);
        rest = &tail[length..];
    }
    crate::reflection::pool_of_answers(&answers)
}

/// A protoset file's bytes: an error or a pool.
pub fn protoset(bytes: &[u8]) -> Result<prost_reflect::DescriptorPool, DynprotoError> {
    crate::decode_protoset(bytes, "the fuzzed protoset")
}

/// A `.proto` file's text as `--proto` reads it: whether it declares an edition, and if so its
/// lowering, an error or a proto2/proto3 text with as many lines (protox's errors then point at
/// the user's own lines).
pub fn edition_file(source: &str) -> Option<Result<String, DynprotoError>> {
    if !crate::editions::declares_edition(source) {
        return None;
    }
    let lowered = crate::editions::lower(source).map(|l| l.source).map_err(DynprotoError::Descriptors);
    if let Ok(text) = &lowered {
        assert_eq!(text.matches('\n').count(), source.matches('\n').count(), "lines kept");
        assert!(!crate::editions::declares_edition(text), "no edition left");
    }
    Some(lowered)
}

#[cfg(test)]
mod tests {
    /// The `cap-answers-*` seeds of `dynproto_wire` (mode 4) reach the bound each is named for.
    #[test]
    fn the_reflection_cap_seeds_reach_their_bounds() {
        let seeds = std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("../../fuzz/seeds/dynproto_wire");
        for (seed, bound) in [
            ("cap-answers-over-10000-files", "the server sent over 10000 files"),
            ("cap-answers-over-500000-fields", "over 500000 protobuf fields"),
            ("cap-answers-past-16mib", "the server's answers pass 16 MiB"),
        ] {
            let input = std::fs::read(seeds.join(seed)).unwrap();
            assert_eq!(input[0] % 5, 4, "{seed} is read as reflection answers");
            let error = super::reflection_answers(&input[1..]).unwrap_err().to_string();
            assert!(error.contains(bound), "{seed}: {error}");
        }
        let two = std::fs::read(seeds.join("seed-answers-two-files")).unwrap();
        let pool = super::reflection_answers(&two[1..]).unwrap();
        assert!(pool.get_message_by_name("p.A").is_some() && pool.get_message_by_name("p.B").is_some());
    }
}
