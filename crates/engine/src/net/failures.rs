//! Why connections failed to open, counted by reason: a run whose callers could not connect says
//! which limit it met (the server refused, the handshake timed out, this process ran out of file
//! descriptors or of local ports) instead of a bare count of `connect` errors.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One failed attempt to open a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectFailure {
    /// The server's host answered with a reset (nothing listening, or its accept queue full).
    Refused,
    /// No connection within the connect timeout (SYNs dropped, a handshake that stalls).
    TimedOut,
    /// This process's open-files limit (EMFILE) or the system's (ENFILE).
    OpenFiles,
    /// No local port left for another connection to this address (EADDRNOTAVAIL).
    LocalPorts,
    /// The TLS handshake failed, or the server did not agree to the protocol (ALPN).
    Handshake(String),
    Other(String),
}

impl ConnectFailure {
    /// The reason an I/O error from connect(2) names.
    pub fn of(e: &std::io::Error) -> Self {
        match e.raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE) => ConnectFailure::OpenFiles,
            Some(libc::EADDRNOTAVAIL) => ConnectFailure::LocalPorts,
            _ => match e.kind() {
                std::io::ErrorKind::ConnectionRefused => ConnectFailure::Refused,
                std::io::ErrorKind::TimedOut => ConnectFailure::TimedOut,
                _ => ConnectFailure::Other(e.to_string()),
            },
        }
    }
}

/// Counts of [`ConnectFailure`]s, and the first message of each kind that carries one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConnectFailures {
    pub refused: u64,
    pub timed_out: u64,
    pub open_files: u64,
    pub local_ports: u64,
    pub handshake: u64,
    pub other: u64,
    /// The first handshake or other failure's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ConnectFailures {
    pub fn total(&self) -> u64 {
        self.refused + self.timed_out + self.open_files + self.local_ports + self.handshake + self.other
    }

    /// What happened after `earlier` (a target's tally is kept across the runs of a search).
    pub fn since(&self, earlier: &ConnectFailures) -> ConnectFailures {
        ConnectFailures {
            refused: self.refused - earlier.refused,
            timed_out: self.timed_out - earlier.timed_out,
            open_files: self.open_files - earlier.open_files,
            local_ports: self.local_ports - earlier.local_ports,
            handshake: self.handshake - earlier.handshake,
            other: self.other - earlier.other,
            message: if self.handshake + self.other > earlier.handshake + earlier.other {
                self.message.clone()
            } else {
                None
            },
        }
    }
}

/// A tally shared by every connect of a target. Relaxed atomics; a lock only for the first message.
#[derive(Debug, Default)]
pub struct FailureTally {
    refused: AtomicU64,
    timed_out: AtomicU64,
    open_files: AtomicU64,
    local_ports: AtomicU64,
    handshake: AtomicU64,
    other: AtomicU64,
    message: Mutex<Option<String>>,
}

impl FailureTally {
    pub fn count(&self, failure: &ConnectFailure) {
        let (counter, message) = match failure {
            ConnectFailure::Refused => (&self.refused, None),
            ConnectFailure::TimedOut => (&self.timed_out, None),
            ConnectFailure::OpenFiles => (&self.open_files, None),
            ConnectFailure::LocalPorts => (&self.local_ports, None),
            ConnectFailure::Handshake(m) => (&self.handshake, Some(m)),
            ConnectFailure::Other(m) => (&self.other, Some(m)),
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = message {
            let mut first = self.message.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert_with(|| m.clone());
        }
    }

    pub fn totals(&self) -> ConnectFailures {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ConnectFailures {
            refused: n(&self.refused),
            timed_out: n(&self.timed_out),
            open_files: n(&self.open_files),
            local_ports: n(&self.local_ports),
            handshake: n(&self.handshake),
            other: n(&self.other),
            message: self.message.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Error;

    #[test]
    fn errors_of_connect_name_their_limit() {
        assert_eq!(ConnectFailure::of(&Error::from_raw_os_error(libc::EMFILE)), ConnectFailure::OpenFiles);
        assert_eq!(ConnectFailure::of(&Error::from_raw_os_error(libc::ENFILE)), ConnectFailure::OpenFiles);
        assert_eq!(ConnectFailure::of(&Error::from_raw_os_error(libc::EADDRNOTAVAIL)), ConnectFailure::LocalPorts);
        assert_eq!(ConnectFailure::of(&Error::from_raw_os_error(libc::ECONNREFUSED)), ConnectFailure::Refused);
        assert_eq!(ConnectFailure::of(&Error::from_raw_os_error(libc::ETIMEDOUT)), ConnectFailure::TimedOut);
        assert!(matches!(ConnectFailure::of(&Error::other("odd")), ConnectFailure::Other(m) if m == "odd"));
    }

    #[test]
    fn a_tally_counts_by_reason_and_keeps_the_first_message() {
        let tally = FailureTally::default();
        tally.count(&ConnectFailure::Refused);
        let before = tally.totals();
        tally.count(&ConnectFailure::Refused);
        tally.count(&ConnectFailure::Handshake("bad certificate".into()));
        tally.count(&ConnectFailure::Other("later".into()));
        let all = tally.totals();
        assert_eq!((all.refused, all.handshake, all.other, all.total()), (2, 1, 1, 4));
        assert_eq!(all.message.as_deref(), Some("bad certificate"));
        let since = all.since(&before);
        assert_eq!((since.refused, since.total(), since.message.as_deref()), (1, 3, Some("bad certificate")));
        assert_eq!(all.since(&all), ConnectFailures::default());
    }
}
