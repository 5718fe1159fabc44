//! Why a server cannot be started as asked: each kind carries the one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A CPU limit or burst whose text is not one (`--server-cpu-limit 20%`, `20ms`).
    #[error("{0}")]
    BadLimit(String),
    /// This machine cannot hold a server to a CPU limit (no cgroup cpu controller, not root).
    #[error("{0}")]
    CannotLimit(String),
    /// The server does not offer what was asked (TLS, HTTP/3): its server.toml says so.
    #[error("{0}")]
    NotOffered(String),
}

/// The message, for callers whose own errors are still strings.
impl From<LaunchError> for String {
    fn from(e: LaunchError) -> String {
        e.to_string()
    }
}
