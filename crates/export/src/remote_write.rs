//! Prometheus remote write 1.0: a `WriteRequest` (prompb/types.proto and remote.proto, the fields
//! callbench sends), protobuf-encoded and snappy-compressed (block format), as the receiver reads it.

use crate::native::{NativeHistogram, ZERO_THRESHOLD};
use crate::point::{Kind, Point, Value};
use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
    #[prost(message, repeated, tag = "3")]
    pub metadata: Vec<MetricMetadata>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct MetricMetadata {
    /// UNKNOWN 0, COUNTER 1, GAUGE 2, HISTOGRAM 3.
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    #[prost(string, tag = "2")]
    pub metric_family_name: String,
    #[prost(string, tag = "4")]
    pub help: String,
    #[prost(string, tag = "5")]
    pub unit: String,
}

/// A native histogram with integer counts (`count_int`, `zero_count_int`, deltas).
#[derive(Clone, PartialEq, Message)]
pub struct Histogram {
    #[prost(uint64, tag = "1")]
    pub count_int: u64,
    #[prost(double, tag = "3")]
    pub sum: f64,
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    #[prost(uint64, tag = "6")]
    pub zero_count_int: u64,
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    /// UNKNOWN 0, YES 1, NO 2, GAUGE 3: a repetition's histogram stands alone, a gauge histogram.
    #[prost(int32, tag = "14")]
    pub reset_hint: i32,
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct BucketSpan {
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

const RESET_HINT_GAUGE: i32 = 3;

/// The request for `points`, each at `timestamp_ms`: one series per point, the families' help and
/// type as metadata.
pub fn request(points: &[Point], timestamp_ms: i64) -> WriteRequest {
    let mut metadata: Vec<MetricMetadata> = Vec::new();
    let timeseries = points
        .iter()
        .map(|p| {
            if !metadata.iter().any(|m| m.metric_family_name == p.name) {
                metadata.push(MetricMetadata {
                    r#type: match p.kind {
                        Kind::Gauge => 2,
                        Kind::Histogram => 3,
                    },
                    metric_family_name: p.name.to_string(),
                    help: p.help.to_string(),
                    unit: p.unit.to_string(),
                });
            }
            let labels = p
                .sorted_labels()
                .into_iter()
                .map(|(name, value)| Label { name: name.to_string(), value: value.to_string() })
                .collect();
            match &p.value {
                Value::Gauge(v) => TimeSeries {
                    labels,
                    samples: vec![Sample { value: *v, timestamp: timestamp_ms }],
                    histograms: vec![],
                },
                Value::Histogram(h) => {
                    TimeSeries { labels, samples: vec![], histograms: vec![histogram(h, timestamp_ms)] }
                }
            }
        })
        .collect();
    WriteRequest { timeseries, metadata }
}

fn histogram(h: &NativeHistogram, timestamp_ms: i64) -> Histogram {
    let (spans, deltas) = h.spans_and_deltas();
    Histogram {
        count_int: h.count,
        sum: h.sum,
        schema: h.schema,
        zero_threshold: ZERO_THRESHOLD,
        zero_count_int: h.zero_count,
        positive_spans: spans.iter().map(|s| BucketSpan { offset: s.offset, length: s.length }).collect(),
        positive_deltas: deltas,
        reset_hint: RESET_HINT_GAUGE,
        timestamp: timestamp_ms,
    }
}

/// The request's body: protobuf, snappy block-compressed.
pub fn body(request: &WriteRequest) -> Result<Vec<u8>, snap::Error> {
    snap::raw::Encoder::new().compress_vec(&request.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::Labels;

    #[test]
    fn a_histogram_series_reads_back_with_its_buckets() {
        let h = NativeHistogram {
            schema: 8,
            count: 6,
            sum: 0.002,
            zero_count: 0,
            buckets: [(-3000, 1), (-2999, 3), (-2990, 2)].into_iter().collect(),
        };
        let labels: Labels = vec![("suite".into(), "default".into()), ("cell".into(), "a/b".into())];
        let points = [
            Point::histogram("callbench_latency_seconds", "latency", "seconds", labels.clone(), h),
            Point::gauge("callbench_calls", "calls", "", labels, 6.0),
        ];
        let request = request(&points, 1_700_000_000_000);
        let compressed = body(&request).unwrap();
        let plain = snap::raw::Decoder::new().decompress_vec(&compressed).unwrap();
        let back = WriteRequest::decode(&plain[..]).unwrap();
        assert_eq!(back, request);
        let series = &back.timeseries[0];
        let names: Vec<&str> = series.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "cell", "suite"], "labels sorted by name");
        let histogram = &series.histograms[0];
        assert_eq!(histogram.positive_deltas, [1, 2, -1]);
        assert_eq!(histogram.positive_spans.len(), 2);
        assert_eq!(back.timeseries[1].samples[0].value, 6.0);
        assert_eq!(back.metadata.len(), 2);
    }
}
