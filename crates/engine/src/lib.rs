//! callbench's load engine: one driver loop for every protocol and load model.
//!
//! A [`pacer::Pacer`] says when calls should start, a [`stop::Stop`] when the run ends, a
//! [`target::Target`] makes the calls, [`driver::run`] sends one [`record::CallRecord`] per call to a
//! channel, and consumers such as [`stats::Stats`] aggregate them. The engine never formats output.

pub mod clock;
pub mod driver;
pub mod inproc;
pub mod pacer;
pub mod rate;
pub mod record;
pub mod rng;
pub mod stats;
pub mod stop;
pub mod target;

pub use driver::{run, Load, RunInfo};
pub use pacer::{Arrivals, Closed, Next, Open, Pacer};
pub use rate::{RateShape, Segment};
pub use record::{ByteCounts, CallRecord, ErrorKind, Outcome};
pub use stats::{Percentiles, Stats, Summary};
pub use stop::Stop;
pub use target::{Reply, Target};
