//! Why a run cannot go on: each kind carries the one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The suite or a flag says something that is not one (`repetitions = "x"`, an unknown server,
    /// a rate `"max"` with no such cell, a threshold `p99 <`): the text to fix.
    #[error("{0}")]
    Settings(String),
    /// What the suite needs could not be built or set up (a server's build, Python's packages).
    #[error("{0}")]
    Build(String),
    /// A user's endpoint does not answer as the suite says it should (refused, another protocol).
    #[error("{0}")]
    Endpoint(String),
    /// This machine cannot do what the run asks (pin to a CPU, make the emulated network).
    #[error("{0}")]
    Machine(String),
    /// A results file or a committed reproduction cannot be read or written.
    #[error("{0}")]
    Files(String),
}

/// Pinning this process to the run's CPUs failed: this machine cannot do what the run asks.
impl From<callbench_machine::pinning::PinError> for RunError {
    fn from(e: callbench_machine::pinning::PinError) -> RunError {
        RunError::Machine(e.to_string())
    }
}

/// The message, for callers whose own errors are still strings.
impl From<RunError> for String {
    fn from(e: RunError) -> String {
        e.to_string()
    }
}
