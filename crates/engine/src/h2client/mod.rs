//! A lean HTTP/2 client for the engine's runs: request header blocks encoded once, the frames of
//! all calls on a connection written together, answers parsed under one lock per read. It does
//! what a load client needs (unary calls, requests and answers streamed in pieces, flow control
//! both ways, CONTINUATION, padding, GOAWAY, resets, cancelled calls) and nothing a load client
//! does not (no priorities, no server push). Probes and reflection before a run use it too.

mod block;
mod conn;
mod fields;
mod frame;
pub(crate) mod hpack;

#[cfg(feature = "fuzzing")]
pub use block::check_round_trip;
pub use block::{request_block, HeaderList, RequestBlocks};
#[cfg(feature = "fuzzing")]
pub(crate) use conn::MAX_PENDING_OUT;
pub use conn::{Answer, Connection, H2Error, Stream};
/// HTTP/3's bounds are HTTP/2's ([`crate::h3bounds`], [`crate::h3pool`]).
pub(crate) use conn::{CONNECTION_WINDOW, MAX_FRAME, MAX_HEADER_LIST, STREAM_WINDOW};
