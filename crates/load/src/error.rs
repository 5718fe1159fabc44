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

impl LoadError {
    /// The engine's failure to reach the target (a probe, a first connection): the machine's own
    /// limits (no free port, no file descriptor, no io_uring) stay the machine's, a bad setting stays
    /// a setting, anything else (refused, unreachable, a handshake or protocol failing) is the target.
    pub fn reaching(e: callbench_engine::EngineError) -> LoadError {
        use callbench_engine::EngineError as E;
        match e {
            E::Machine(m) => LoadError::Machine(m),
            E::Settings(m) => LoadError::Settings(m),
            E::NotAllowed(m) | E::Target(m) | E::Protocol(m) | E::Run(m) => LoadError::Target(m),
        }
    }
}

/// The message, for callers whose own errors are still strings.
impl From<LoadError> for String {
    fn from(e: LoadError) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::LoadError;
    use callbench_engine::EngineError;

    #[test]
    fn reaching_keeps_the_machines_limits_apart_from_the_target() {
        let out_of_ports = EngineError::Machine("no free local port".into());
        assert_eq!(LoadError::reaching(out_of_ports), LoadError::Machine("no free local port".into()));
        let refused = EngineError::Target("connection refused".into());
        assert_eq!(LoadError::reaching(refused), LoadError::Target("connection refused".into()));
        let not_allowed = EngineError::NotAllowed("refusing to load 192.0.2.1".into());
        assert!(matches!(LoadError::reaching(not_allowed), LoadError::Target(_)));
        let bad_name = EngineError::Settings("bad server name".into());
        assert!(matches!(LoadError::reaching(bad_name), LoadError::Settings(_)));
    }
}
