//! Why a method cannot be called as asked: each kind carries the one-line message callbench prints.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DynprotoError {
    /// Descriptors that cannot be loaded: a `.proto` that is missing or does not compile, a
    /// protoset that is not one, an Editions file that cannot be lowered, a descriptor stock tools
    /// refuse, a `google.api.http` rule that cannot be used (`proto file x.proto not found (import
    /// paths: .)`, `protoset x.protoset holds no file descriptors`).
    #[error("{0}")]
    Descriptors(String),
    /// The method asked for is not one the descriptors have, or not as asked: a malformed name, an
    /// unknown service or method, no REST twin (`service p.Nope not found (services: p.Svc)`, `bad
    /// method name "Svc": expected package.Service/Method`).
    #[error("{0}")]
    Method(String),
    /// A message that does not fit the method: the request's JSON (`request JSON for p.Req:
    /// unknown field "x"`, `the path needs field 'name': give it in -d`) or an answer's bytes
    /// (`response is not a valid p.Resp: …`).
    #[error("{0}")]
    Message(String),
    /// The server cannot be reached (`cannot connect to 127.0.0.1:9: Connection refused`, an
    /// HTTP/2 handshake that fails), or no connection was given to ask.
    #[error("{0}")]
    Connect(String),
    /// The server's reflection fails: it has none, ends the exchange, says it cannot give a file,
    /// or sends answers or descriptors that cannot be read (`reflection: h does not offer server
    /// reflection (…)`).
    #[error("{0}")]
    Reflection(String),
}

impl DynprotoError {
    /// The same kind with its message rewritten.
    pub(crate) fn map(self, f: impl FnOnce(String) -> String) -> DynprotoError {
        match self {
            DynprotoError::Descriptors(m) => DynprotoError::Descriptors(f(m)),
            DynprotoError::Method(m) => DynprotoError::Method(f(m)),
            DynprotoError::Message(m) => DynprotoError::Message(f(m)),
            DynprotoError::Connect(m) => DynprotoError::Connect(f(m)),
            DynprotoError::Reflection(m) => DynprotoError::Reflection(f(m)),
        }
    }
}

/// The message, for callers whose own errors are still strings.
impl From<DynprotoError> for String {
    fn from(e: DynprotoError) -> String {
        e.to_string()
    }
}
