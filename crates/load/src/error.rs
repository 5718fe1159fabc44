//! Why a load could not be run, by what its caller does about it: each kind carries the one-line
//! message the CLI prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Flags that do not parse or do not go together: fix the command line (or the spec).
    #[error("{0}")]
    Settings(String),
    /// The target: a URL that is not one, an address the run may not reach, a method or service
    /// its descriptors do not have, descriptors that cannot be read (.proto, protoset, reflection).
    #[error("{0}")]
    Target(String),
    /// What the calls send or expect: a body, data or certificate file, a template, a workload's
    /// inputs.
    #[error("{0}")]
    Data(String),
    /// This machine's limits and set-up: open files, io_uring, TLS.
    #[error("{0}")]
    Machine(String),
    /// The run itself, once started.
    #[error("{0}")]
    Run(String),
}

/// The message, for callers whose own errors are still strings.
impl From<LoadError> for String {
    fn from(e: LoadError) -> String {
        e.to_string()
    }
}
