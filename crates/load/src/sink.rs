//! Where a run's call records go: every call into the overall stats, and into its rate segment's;
//! and what one run measured.

use callbench_engine::{CallRecord, RunInfo, Segment, Sink, Stats, Stop};
use std::time::Duration;

/// A start later than this after its intended time counts as late.
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// Every call into the overall stats, and into its rate segment's (by intended start).
pub struct RunSink {
    pub all: Stats,
    pub segments: Vec<Stats>,
    ends: Vec<Duration>,
}

impl RunSink {
    pub fn new(stop: Stop, segments: &[Segment]) -> Self {
        // The shape starts at 0, like the pacer: a warm-up uses up its start (and Stats leaves it out).
        let mut end = Duration::ZERO;
        let ends = segments
            .iter()
            .map(|s| {
                end += s.duration;
                end
            })
            .collect();
        let segments = segments.iter().map(|_| Stats::new(stop, LATE_AFTER)).collect();
        RunSink { all: Stats::new(stop, LATE_AFTER), segments, ends }
    }
}

impl Sink for RunSink {
    fn add(&mut self, r: &CallRecord) {
        self.all.add(r);
        if let Some(i) = self.ends.iter().position(|end| r.intended < *end) {
            self.segments[i].add(r);
        }
    }
    fn merge(&mut self, other: Self) {
        self.all.merge(other.all);
        for (mine, theirs) in self.segments.iter_mut().zip(other.segments) {
            mine.merge(theirs);
        }
    }
}

/// One run's measurements.
pub struct RunResult {
    pub info: RunInfo,
    pub stats: Stats,
    pub segments: Vec<Stats>,
    pub segment_bounds: Vec<Segment>,
}
