//! Why a peer tool cannot take part, or what it left cannot be read: each kind carries the
//! one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// No tool or seed client of that name (the message lists the known ones).
    #[error("{0}")]
    Unknown(String),
    /// A load the tool cannot make as asked, so a caller leaves the tool out of the cell: "wrk
    /// speaks HTTP/1.1 only", a count of calls, a new connection per call…
    #[error("{0}")]
    Unsupported(String),
    /// What it needs is not installed or built here, or cannot be: "seed003-java is not built (mvn
    /// …)", "vegeta is not installed", k6 that this machine cannot install.
    #[error("{0}")]
    Missing(String),
    /// Its report or output cannot be read as figures: "no 'finished in' line", a JSON report
    /// without `count`.
    #[error("{0}")]
    Report(String),
    /// The run itself failed: its files could not be written or its program not started
    /// ("cannot start /usr/bin/wrk: …").
    #[error("{0}")]
    Run(String),
}

/// The message, for callers whose errors are still strings.
impl From<PeerError> for String {
    fn from(e: PeerError) -> String {
        e.to_string()
    }
}
