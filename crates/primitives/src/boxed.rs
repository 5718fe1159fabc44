//! A future boxed where a crate hands it to the crates above it.
//!
//! rustc compiles the body of an `async fn` (a coroutine) again in every crate that awaits it,
//! with everything it calls that is not compiled already: awaiting `callbench_load::execute`
//! compiled the whole load engine, once per protocol, into callbench-runner and into the CLI too.
//! A plain function that returns its future boxed is compiled once, where it is defined; the
//! crates above call it (one allocation per call of it, none per call the engine makes).

use std::future::Future;
use std::pin::Pin;

/// A boxed future that may move between threads.
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
