//! Why a server could not be verified, or a check of one could not pass: each kind carries the
//! one-line message callbench prints.

use callbench_launcher::LaunchError;
pub(crate) use callbench_primitives::error_text::{because, chain};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// What was given is not one: a target that is no address (`'localhost:80' is neither a server
    /// name nor http(s)://host:port ...`, a host that does not resolve), a request that cannot be
    /// built, a vector the contract cannot encode (`vector: unknown method x.Y/Z`).
    #[error("{0}")]
    BadInput(String),
    /// No connection to the server, or no answer in time (`cannot connect to 127.0.0.1:9:
    /// Connection refused`, `no answer within 30 s: deadline has elapsed`).
    #[error("{0}")]
    Unreachable(String),
    /// The server's answer breaks the contract: a check fails (`status 500 (expected 200); body:
    /// ...`, `reply differs: got ..., expected ...`, an answer that is not HTTP).
    #[error("{0}")]
    Contract(String),
    /// The server process exited during start-up or was not ready in time (`rust-axum exited during
    /// start-up (exit status: 1); its last output: ...`).
    #[error("{0}")]
    NotReady(String),
    /// The server could not be built or started, as the launcher says why (no such server, not
    /// supported here, no free port).
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

/// The message, for callers whose own errors are still strings.
impl From<VerifyError> for String {
    fn from(e: VerifyError) -> String {
        e.to_string()
    }
}

impl VerifyError {
    /// The same kind, its message `what: message`: what anyhow's `.context(what)` printed.
    pub(crate) fn within(self, what: impl std::fmt::Display) -> VerifyError {
        use VerifyError::*;
        match self {
            BadInput(m) => BadInput(format!("{what}: {m}")),
            Unreachable(m) => Unreachable(format!("{what}: {m}")),
            Contract(m) => Contract(format!("{what}: {m}")),
            NotReady(m) => NotReady(format!("{what}: {m}")),
            // Only starting a server fails so, and no check wraps that: the text is kept.
            Launch(e) => NotReady(format!("{what}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::VerifyError::*;

    /// As anyhow's `.context(what)` printed it, and the kind kept.
    #[test]
    fn within_prefixes_the_message_and_keeps_the_kind() {
        let e = Unreachable("the connection failed: Connection reset by peer".into()).within("PUT /auth/x: no answer");
        assert_eq!(e, Unreachable("PUT /auth/x: no answer: the connection failed: Connection reset by peer".into()));
        assert_eq!(Contract("status 500".into()).within("w"), Contract("w: status 500".into()));
    }
}
