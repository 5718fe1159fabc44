//! What the engine holds of a server's answer, at most: a server under test may send anything,
//! and a load tool that grows without bound loses the run. Beyond these an answer fails as
//! `ErrorKind::Protocol`; bodies no check needs are counted as they arrive and never held.

/// An answer body kept for a check (`--check`, `--expect-body`), as sent or once inflated. The
/// contract's largest answer is an echo of about 1 MB; 16 MiB leaves room for the user's own,
/// and bounds the memory of a run at about that much per call in flight that checks its answer.
pub const MAX_KEPT_BODY: usize = 16 << 20;
/// A chunk-size line of a chunked body, extensions included.
pub const MAX_CHUNK_LINE: usize = 4 * 1024;
/// A chunked body's trailer section (as an answer's head).
pub const MAX_TRAILERS: usize = 64 * 1024;
