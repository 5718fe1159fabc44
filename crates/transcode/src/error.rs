//! Why a message cannot be made or read: each kind carries the one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscodeError {
    /// The method has no REST twin: its .proto gives no `google.api.http` rule (`p.Svc.Get has no
    /// google.api.http rule: …`).
    #[error("{0}")]
    Method(String),
    /// The method's rule cannot be used (`p.Svc.Get: its google.api.http rule names no method and
    /// path`, `a '{' without its '}'`).
    #[error("{0}")]
    Rule(String),
    /// A message that does not fit the method: the request's JSON (`request JSON for p.Req:
    /// unknown field "x"`, `the path needs field 'name': give it in -d`) or an answer's bytes
    /// (`response is not a valid p.Resp: …`).
    #[error("{0}")]
    Message(String),
}

impl TranscodeError {
    /// The same kind with its message rewritten.
    pub(crate) fn map(self, f: impl FnOnce(String) -> String) -> TranscodeError {
        match self {
            TranscodeError::Method(m) => TranscodeError::Method(f(m)),
            TranscodeError::Rule(m) => TranscodeError::Rule(f(m)),
            TranscodeError::Message(m) => TranscodeError::Message(f(m)),
        }
    }
}

/// The message, for callers whose own errors are still strings.
impl From<TranscodeError> for String {
    fn from(e: TranscodeError) -> String {
        e.to_string()
    }
}
