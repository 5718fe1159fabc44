//! Why a server or program cannot be found, built, started or run as asked: each kind carries the
//! one-line message callbench prints.

pub(crate) use callbench_primitives::error_text::{because, chain};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A CPU limit or burst whose text is not one (`--server-cpu-limit 20%`, `20ms`).
    #[error("{0}")]
    BadLimit(String),
    /// This machine cannot hold a server to a CPU limit (no cgroup cpu controller, not root).
    #[error("{0}")]
    CannotLimit(String),
    /// The server does not offer what was asked, its server.toml says so (TLS, HTTP/3, or not
    /// supported here at all: `rust-monoio is not supported here: needs io_uring`).
    #[error("{0}")]
    NotOffered(String),
    /// No callbench checkout, nor a folder of callbench's own outside one (`CALLBENCH_ROOT=/tmp is
    /// not a callbench checkout`, no HOME).
    #[error("{0}")]
    NoCheckout(String),
    /// A server.toml or processing.toml that cannot be read or is not a valid one (`unknown field
    /// speed`, an empty start.command).
    #[error("{0}")]
    BadManifest(String),
    /// No server of the name asked for (`no server named 'nope' (known: rust-actix, ...)`).
    #[error("{0}")]
    NoSuchServer(String),
    /// A file, folder or process the system would not let callbench read, write or wait for
    /// (`cannot write target/callbench/users.json: Permission denied`, `cannot list servers`).
    #[error("{0}")]
    Io(String),
    /// A build command that could not run or failed (`building rust-axum failed (exit status: 101)`).
    #[error("{0}")]
    Build(String),
    /// A process that could not be started as asked: no free port, a host that is not an IP
    /// address, a network namespace it cannot enter, a program that does not exist.
    #[error("{0}")]
    Start(String),
    /// A program that ran but failed or answered unexpectedly (`p failed (exit 1: ...)`, `p timed
    /// 3 iterations, 5 were asked`).
    #[error("{0}")]
    Failed(String),
    /// The run was cancelled (Ctrl-C) and its process killed.
    #[error("{0}")]
    Interrupted(String),
}

/// The message, for callers whose own errors are still strings.
impl From<LaunchError> for String {
    fn from(e: LaunchError) -> String {
        e.to_string()
    }
}
