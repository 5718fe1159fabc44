//! Where call records go. The workers on one runtime thread fill that thread's sink (a lock no other
//! thread takes, no channel on the hot path); the driver merges them when the run ends.

use crate::record::CallRecord;

pub trait Sink: Send + 'static {
    fn add(&mut self, record: &CallRecord);
    fn merge(&mut self, other: Self);
}

/// Keeps every record (tests, exporters of raw calls).
impl Sink for Vec<CallRecord> {
    fn add(&mut self, record: &CallRecord) {
        self.push(*record);
    }
    fn merge(&mut self, mut other: Self) {
        self.append(&mut other);
    }
}
