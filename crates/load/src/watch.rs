//! What a caller sees of a load while it runs: each run's start, with a live count of the calls
//! done and how long or how many calls it is planned for, its end, and the search's lines. The CLI
//! draws a progress bar from it; `callbench run` watches nothing ([`Unwatched`]).

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// One run as it starts.
pub struct RunView {
    /// Calls done so far (warm-up included), counted by the engine.
    pub done: Arc<AtomicU64>,
    /// How long the run is planned to take, warm-up included (None: bounded by calls only).
    pub length: Option<Duration>,
    /// The calls it is bounded by, if any.
    pub calls: Option<u64>,
}

pub trait Watch: Send + Sync {
    fn run_started(&self, _run: RunView) {}
    fn run_ended(&self) {}
    /// A line for the person running the load (the search's trials).
    fn say(&self, _line: &str) {}
}

/// Sees nothing.
pub struct Unwatched;

impl Watch for Unwatched {}
