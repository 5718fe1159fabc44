//! What streaming calls add to a run's summary: their messages each way, per call and per second,
//! payload bytes per message, and the time from a call's start to its first complete answer
//! message. A streaming call is measured as one call from its first request message to the end of
//! its answer, so `latency_us` is the whole stream's time; this says what happened inside it.

use crate::histograms::{histogram, micros, percentiles, PerCall, Percentiles};
use crate::record::CallRecord;
use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct StreamStats {
    pub calls: u64,
    pub sent: u64,
    pub received: u64,
    pub first_answer_us: Histogram<u64>,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats { calls: 0, sent: 0, received: 0, first_answer_us: histogram() }
    }
}

/// [`StreamStats`] in a summary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamSummary {
    /// Measured streaming calls (each a whole stream).
    pub calls: u64,
    pub messages_per_call: PerCall,
    /// Messages each way over the measured window.
    pub messages_per_s: PerCall,
    /// Payload bytes per message each way (gRPC messages without their 5-byte prefix).
    pub payload_bytes_per_message: PerCall,
    /// From a call's start to its first complete answer message (calls that had one).
    pub first_answer_us: Option<Percentiles>,
}

impl StreamStats {
    pub fn add(&mut self, r: &CallRecord) {
        let Some(stream) = r.stream else { return };
        self.calls += 1;
        self.sent += u64::from(stream.sent);
        self.received += u64::from(stream.received);
        if let Some(first) = stream.first_answer {
            self.first_answer_us.saturating_record(micros(first));
        }
    }

    pub fn merge(&mut self, other: &StreamStats) {
        self.calls += other.calls;
        self.sent += other.sent;
        self.received += other.received;
        self.first_answer_us.add(&other.first_answer_us).expect("same bounds");
    }

    /// None when no measured call streamed. `seconds` is the window the calls took; `payload` the
    /// run's payload bytes (sent, received).
    pub fn summary(&self, seconds: f64, payload: (u64, u64)) -> Option<StreamSummary> {
        if self.calls == 0 {
            return None;
        }
        let ratio = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
        let (sent, received) = (self.sent as f64, self.received as f64);
        Some(StreamSummary {
            calls: self.calls,
            messages_per_call: PerCall {
                sent: ratio(sent, self.calls as f64),
                received: ratio(received, self.calls as f64),
            },
            messages_per_s: PerCall { sent: ratio(sent, seconds), received: ratio(received, seconds) },
            payload_bytes_per_message: PerCall {
                sent: ratio(payload.0 as f64, sent),
                received: ratio(payload.1 as f64, received),
            },
            first_answer_us: percentiles(&self.first_answer_us),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ByteCounts, Outcome, StreamCounts};
    use std::time::Duration;

    fn record(stream: Option<StreamCounts>) -> CallRecord {
        let at = Duration::from_millis(1);
        let bytes = ByteCounts { sent: 100, received: 10 };
        CallRecord { seq: 0, intended: at, start: at, end: at * 2, connect: None, outcome: Outcome::Ok, bytes, stream }
    }

    #[test]
    fn streams_count_their_messages_and_first_answers() {
        let mut s = StreamStats::default();
        s.add(&record(None));
        assert_eq!(s.summary(1.0, (0, 0)), None, "unary calls are not streams");
        let first = Some(Duration::from_micros(300));
        s.add(&record(Some(StreamCounts { sent: 10, received: 1, first_answer: first })));
        let mut other = StreamStats::default();
        other.add(&record(Some(StreamCounts { sent: 30, received: 0, first_answer: None })));
        s.merge(&other);
        let sum = s.summary(2.0, (800, 50)).expect("two streams");
        assert_eq!(sum.calls, 2);
        assert_eq!(sum.messages_per_call, PerCall { sent: 20.0, received: 0.5 });
        assert_eq!(sum.messages_per_s, PerCall { sent: 20.0, received: 0.5 });
        assert_eq!(sum.payload_bytes_per_message, PerCall { sent: 20.0, received: 50.0 });
        let first = sum.first_answer_us.expect("one first answer");
        assert_eq!((first.min, first.max), (300, 300));
    }
}
