//! Small pieces every layer of callbench shares, written once so that they read and behave the
//! same everywhere: the one grammar of durations (`callbench load`'s flags, suite files, link
//! specs, a server's stall schedule), the one seeded generator (the engine's open-loop
//! arrivals, the link's losses and jitter), the one way to make a scratch directory, an error's
//! text with its causes on one line, and the boxed future a crate hands up.

pub mod boxed;
pub mod duration;
pub mod error_text;
pub mod rng;
pub mod scratch;
