//! What every adapter of a load tool provides.

use crate::claims::Claims;
use crate::load::{Invocation, Load, Output};

/// One load tool.
pub trait Tool: Sync {
    /// Its name in suites (`clients = ["wrk"]`) and results.
    fn name(&self) -> &'static str;
    /// The program it runs, looked up on PATH and in Go's and Cargo's bin folders.
    fn program(&self) -> &'static str;
    /// How to install it here, pinned (what `scripts/setup` runs), for messages.
    fn install(&self) -> &'static str;
    /// The arguments that make it print its version.
    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }
    /// The command that puts `load` on the target; `Err` says why this tool cannot. A warm-up it
    /// cannot leave out of its figures is said by [`crate::invocation`].
    fn invocation(&self, load: &Load) -> Result<Invocation, String>;
    /// Whether it leaves `load.warmup` out of its figures itself.
    fn warms_up(&self) -> bool {
        false
    }
    /// Its claims, read from what the run left (stdout, stderr, the files it wrote).
    fn parse(&self, output: &Output) -> Result<Claims, String>;
}
