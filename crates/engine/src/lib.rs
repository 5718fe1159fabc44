//! callbench's load engine: one driver loop for every protocol and load model.
//!
//! Protocols: HTTP/1.1, HTTP/2, HTTP/3 (QUIC), gRPC, raw bytes and in-process calls.
//!
//! A [`Pacer`] says when calls should start, a [`Stop`] when the run ends, a [`Target`] makes the
//! calls, [`run`] gives one [`CallRecord`] per call to each worker's [`Sink`] (such as [`Stats`]),
//! merged when the run ends. The engine never formats output. Its public modules are the ones
//! other crates use (each protocol's client, the network layer, statistics); the loop's own parts
//! are private, their types re-exported here. What cannot be set up or run as asked is an
//! [`EngineError`], by kind (settings, the machine, the target, its protocol).

pub mod call_data;
pub mod clock;
mod cpu;
mod driver;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod grpc;
mod grpc_rules;
mod guard;
mod h2client;
pub mod h2pool;
mod h3bounds;
pub mod h3pool;
mod histograms;
pub mod http1;
pub mod http2;
pub mod http3;
pub mod inproc;
mod limits;
pub mod main_loop;
mod memory;
pub mod net;
mod pacer;
mod rate;
pub mod raw;
mod record;
pub mod request;
mod share;
mod sink;
pub mod stats;
mod stop;
mod stream_stats;
mod target;

pub use driver::{run, Edge, EdgeHook, Load, RunInfo};
pub use error::EngineError;
pub use pacer::{Arrivals, Closed, Next, Open, Pacer};
pub use rate::{RateShape, Segment};
pub use record::{ByteCounts, CallRecord, Connect, ErrorKind, Handshake, Outcome, StreamCounts};
pub use share::{ExecutionSegment, Fraction, Shared};
pub use sink::Sink;
pub use stats::{ColdSummary, Percentiles, Stats, Summary};
pub use stop::Stop;
pub use stream_stats::StreamSummary;
pub use target::{Connected, QuicCounts, Reply, Target, WireTotals};
