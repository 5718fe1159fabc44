//! Why a peer tool cannot take part, or what it left cannot be read: each kind carries the
//! one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// No tool or seed client of that name (the message lists the known ones).
    #[error("{0}")]
    Unknown(String),
    /// A load the tool cannot make as asked (a count of calls, a new connection per call…).
    #[error("{0}")]
    Unsupported(String),
    /// Its report or output cannot be read as figures.
    #[error("{0}")]
    Report(String),
}

/// The message, for callers (and the adapters' Tool methods) whose errors are still strings.
impl From<PeerError> for String {
    fn from(e: PeerError) -> String {
        e.to_string()
    }
}
