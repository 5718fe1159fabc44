//! `callbench load` as a library: a spec (what the flags say) turned into an engine target, a
//! pacer and a load, run, and reported. The CLI and `callbench run` use the same spec; how a
//! report is printed, and the progress bar, are the CLI's.

pub mod build;
pub mod data;
pub mod error;
mod grpc_method;
pub mod open_files;
pub mod parse;
pub mod preset;
pub mod report;
pub mod rest_request;
pub mod search;
pub mod sink;
pub mod spec;
pub mod startup;
pub mod template;
pub mod threshold;
pub mod watch;

pub use callbench_engine::net::socket::Io;
pub use callbench_engine::net::tls::TlsVersion;
pub use error::LoadError;
pub use report::LoadReport;
pub use sink::RunResult;
pub use spec::{LoadSpec, PacerKind, Plan, DEFAULT_CALLS, DEFAULT_CONCURRENCY};
pub use watch::{RunView, Unwatched, Watch};

use callbench_primitives::boxed::Boxed;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the spec (one run, or a search when an objective is given) and reports what was measured.
/// `cancel` ends it early (Ctrl-C); the report then says `interrupted` and holds what was measured.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn execute<'a>(
    spec: &'a LoadSpec,
    cancel: Arc<AtomicBool>,
    watch: &'a dyn Watch,
) -> Boxed<'a, Result<(LoadReport, RunResult), LoadError>> {
    Box::pin(async move {
        let built = build::build(spec).await?;
        if spec.objective.is_some() {
            return search::search(spec, &built, cancel, watch).await;
        }
        let plan = spec.plan(built.concurrency, None, cancel)?;
        let result = built.run(plan, watch).await?;
        Ok((LoadReport::new(spec, &built, &result, None), result))
    })
}
