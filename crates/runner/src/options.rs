//! How `callbench run` was asked to run: CPUs for each side, repetitions, cancel, quiet; and the
//! servers it has verified.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Clone)]
pub struct Options {
    pub suite_text: String,
    pub suite_file: String,
    pub command_line: Vec<String>,
    pub client_cpus: Vec<usize>,
    pub server_cpus: Vec<usize>,
    /// Overrides the suite's repetitions (e.g. a quick look with 2).
    pub repetitions: Option<usize>,
    pub cancel: Arc<AtomicBool>,
    /// A line on stderr per experiment and round.
    pub quiet: bool,
    /// Servers may listen on an address other machines reach (a cluster's `server_host`).
    pub allow_remote: bool,
    /// Let idle CPUs sleep between calls instead of holding `/dev/cpu_dma_latency` at 0.
    pub allow_cpu_idle: bool,
    /// Conditions every cell must meet (`--threshold`), besides its experiment's.
    pub thresholds: Vec<callbench_load::threshold::Threshold>,
    /// The servers the run has verified so far, shared by its experiments (start with the default).
    pub verified: Arc<crate::fleet::Verified>,
}

impl Options {
    /// The same run with the client's and the servers' CPUs swapped (an experiment's `swap_cpus`).
    pub fn swapped(&self) -> Options {
        let mut o = self.clone();
        std::mem::swap(&mut o.client_cpus, &mut o.server_cpus);
        o
    }
}
