//! Why the engine cannot set up or run a load as asked: each kind carries the one-line message
//! callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Settings or request data that cannot be used: a header name or value, a rate, a share of the
    /// run, a TLS file or server name, a load without bounds (`bad header name "a b"`, `a rate must
    /// be a finite number of calls/s ≥ 0, not -1`).
    #[error("{0}")]
    Settings(String),
    /// The caller's rule refuses the target's address, before anything is sent (`refusing to load
    /// example.com (93.184.215.14): …`): allow it, or load another.
    #[error("{0}")]
    NotAllowed(String),
    /// This machine or its kernel cannot: io_uring not available, no UDP socket for QUIC, no file
    /// descriptor or local port left for a connection (`io_uring is not available: …`).
    #[error("{0}")]
    Machine(String),
    /// The target cannot be reached or refuses: a name that does not resolve, a refused or timed-out
    /// connection, a TLS handshake or protocol (ALPN) it does not agree to (`cannot connect to
    /// 127.0.0.1:9: Connection refused (os error 111)`).
    #[error("{0}")]
    Target(String),
    /// The server answered, but not as its protocol says (`HTTP/2 handshake with h:80 failed: …`).
    #[error("{0}")]
    Protocol(String),
    /// The run failed once started: a load worker ended abnormally (`a load worker failed: …`).
    #[error("{0}")]
    Run(String),
}

/// The message, for callers whose own errors are still strings.
impl From<EngineError> for String {
    fn from(e: EngineError) -> String {
        e.to_string()
    }
}
