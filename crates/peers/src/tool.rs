//! What every adapter of a load tool provides.

use crate::claims::Claims;
use crate::error::PeerError;
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
    /// The command that puts `load` on the target; `Err` says why this tool cannot
    /// ([`PeerError::Unsupported`]; [`PeerError::Missing`] for a tool that cannot be installed here).
    /// A warm-up it cannot leave out of its figures is said by [`crate::invocation`].
    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError>;
    /// Whether it can make a count of calls (`load.calls`) rather than run for a duration.
    fn counts_calls(&self) -> bool {
        false
    }
    /// Whether it checks the server's certificate, so needs `load.ca_cert` over TLS.
    fn checks_certificates(&self) -> bool {
        false
    }
    /// The command that builds what it needs in the checkout `repo` (run from there before a suite
    /// that names it, as the servers' builds are); None for a tool installed by scripts/setup.
    fn build_command(&self, _repo: &std::path::Path) -> Option<Vec<String>> {
        None
    }
    /// What it needs beside its program (files built in the checkout `repo`), or how to make it
    /// ([`PeerError::Missing`]).
    fn prepared(&self, _repo: &std::path::Path) -> Result<(), PeerError> {
        Ok(())
    }
    /// Whether it leaves `load.warmup` out of its figures itself.
    fn warms_up(&self) -> bool {
        false
    }
    /// Its claims, read from what the run left (stdout, stderr, the files it wrote); what cannot be
    /// read is a [`PeerError::Report`].
    fn parse(&self, output: &Output) -> Result<Claims, PeerError>;
}
