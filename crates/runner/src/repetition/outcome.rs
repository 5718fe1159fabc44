//! What a repetition gives: its measurement, or why there is none.

use callbench_results::model::{CellStatus, RunMetrics};
use hdrhistogram::Histogram;
use std::fmt;
use std::time::Duration;

/// What one repetition measured, and its latency histogram (µs) over the measured window.
pub struct Measured {
    pub metrics: RunMetrics,
    pub histogram: Histogram<u64>,
    pub window: Duration,
    pub cancelled: bool,
}

/// Why a repetition gave no measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellError {
    /// The server died before or during the repetition (its exit status or signal).
    ServerDied(String),
    /// Anything else: a load that could not start, a program or caller that failed.
    Failed(String),
}

impl CellError {
    /// The status the cell is left in.
    pub fn status(&self) -> CellStatus {
        match self {
            CellError::ServerDied(_) => CellStatus::ServerCrashed,
            CellError::Failed(_) => CellStatus::Error,
        }
    }
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CellError::ServerDied(crash) => write!(f, "server died: {crash}"),
            CellError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<String> for CellError {
    fn from(why: String) -> Self {
        CellError::Failed(why)
    }
}

impl From<crate::RunError> for CellError {
    fn from(why: crate::RunError) -> Self {
        CellError::Failed(why.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_server_is_a_crash_and_anything_else_an_error() {
        let died = CellError::ServerDied("killed by signal 9".into());
        assert_eq!(
            (died.status(), died.to_string().as_str()),
            (CellStatus::ServerCrashed, "server died: killed by signal 9")
        );
        let failed = CellError::from("cannot connect".to_string());
        assert_eq!((failed.status(), failed.to_string().as_str()), (CellStatus::Error, "cannot connect"));
    }
}
