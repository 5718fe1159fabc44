//! callbench's load engine: one driver loop for every protocol and load model.
//!
//! Protocols: HTTP/1.1, HTTP/2, HTTP/3 (QUIC), gRPC, raw bytes and in-process calls.
//!
//! A [`pacer::Pacer`] says when calls should start, a [`stop::Stop`] when the run ends, a
//! [`target::Target`] makes the calls, [`driver::run`] gives one [`record::CallRecord`] per call to each
//! worker's [`sink::Sink`] (such as [`stats::Stats`]), merged when the run ends. The engine never formats output.

pub mod call_data;
pub mod clock;
pub mod cpu;
pub mod driver;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod grpc;
mod grpc_rules;
mod guard;
mod h2client;
pub mod h2pool;
pub mod h3bounds;
pub mod h3pool;
pub mod histograms;
pub mod http1;
pub mod http2;
pub mod http3;
pub mod inproc;
pub mod limits;
pub mod memory;
pub mod net;
pub mod pacer;
pub mod rate;
pub mod raw;
pub mod record;
pub mod request;
pub mod share;
pub mod sink;
pub mod stats;
pub mod stop;
pub mod stream_stats;
pub mod target;

pub use driver::{run, Edge, EdgeHook, Load, RunInfo};
pub use pacer::{Arrivals, Closed, Next, Open, Pacer};
pub use rate::{RateShape, Segment};
pub use record::{ByteCounts, CallRecord, Connect, ErrorKind, Handshake, Outcome, StreamCounts};
pub use share::{ExecutionSegment, Fraction, Shared};
pub use sink::Sink;
pub use stats::{ColdSummary, Percentiles, Stats, Summary};
pub use stop::Stop;
pub use stream_stats::StreamSummary;
pub use target::{Connected, QuicCounts, Reply, Target, WireTotals};
