//! HDR histograms as Prometheus native histograms: exponential buckets whose bounds are powers of
//! 2^(2^-schema), bucket `i` holding the values in (bound(i-1), bound(i)].
//!
//! The conversion is exact with respect to the HDR histogram: every recorded value (the highest
//! value its HDR bucket stands for, the value callbench's percentiles read) is counted in the one
//! native bucket that contains it. A quantile read from the native histogram therefore lies in
//! the same bucket as callbench's own, so the two differ by less than that bucket's width: a
//! relative error below 2^(2^-schema) − 1 (0.271% at schema 8, the finest Prometheus takes).

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The finest schema Prometheus accepts: 256 buckets per power of two.
pub const FINEST_SCHEMA: i32 = 8;

/// Values at or below this (seconds) go to the zero bucket: Prometheus's default threshold.
pub const ZERO_THRESHOLD: f64 = 2.938735877055719e-39; // 2^-128

/// A native histogram with integer counts, positive values only (latencies).
#[derive(Debug, Clone, PartialEq)]
pub struct NativeHistogram {
    pub schema: i32,
    pub count: u64,
    pub sum: f64,
    pub zero_count: u64,
    /// Bucket index → count, empty buckets left out.
    pub buckets: BTreeMap<i32, u64>,
}

/// A run of consecutive buckets: `offset` from the end of the previous span (from index 0 for
/// the first), `length` buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub offset: i32,
    pub length: u32,
}

impl NativeHistogram {
    /// The HDR histogram `h` whose values are in `unit` seconds (1e-6 for callbench's µs).
    pub fn from_hdr(h: &Histogram<u64>, unit: f64, schema: i32) -> NativeHistogram {
        let mut native = NativeHistogram { schema, count: 0, sum: 0.0, zero_count: 0, buckets: BTreeMap::new() };
        for v in h.iter_recorded() {
            let value = v.value_iterated_to() as f64 * unit;
            let n = v.count_at_value();
            native.count += n;
            native.sum += value * n as f64;
            if value <= ZERO_THRESHOLD {
                native.zero_count += n;
            } else {
                *native.buckets.entry(bucket_index(value, schema)).or_default() += n;
            }
        }
        native
    }

    /// The same observations in a coarser schema: each bucket's bounds are bounds of the coarser
    /// one too, so nothing moves across a bound.
    pub fn downscaled(&self, schema: i32) -> NativeHistogram {
        assert!(schema <= self.schema, "downscaling goes to a coarser schema");
        let factor = 1i64 << (self.schema - schema);
        let mut buckets = BTreeMap::new();
        for (&i, &n) in &self.buckets {
            // ceil(i / factor): bucket i's upper bound is the coarser bucket's.
            let coarse = -((-(i as i64)).div_euclid(factor)) as i32;
            *buckets.entry(coarse).or_default() += n;
        }
        NativeHistogram { schema, buckets, ..self.clone() }
    }

    /// The buckets as spans and count deltas (each bucket's count minus the previous one's), the
    /// encoding of Prometheus's remote write and of its protobuf exposition.
    pub fn spans_and_deltas(&self) -> (Vec<Span>, Vec<i64>) {
        let mut spans: Vec<Span> = Vec::new();
        let mut deltas = Vec::with_capacity(self.buckets.len());
        let mut next: Option<i32> = None; // the index right after the last bucket written
        let mut previous = 0i64;
        for (&i, &n) in &self.buckets {
            match next {
                Some(expected) if expected == i => spans.last_mut().expect("a span is open").length += 1,
                Some(expected) => spans.push(Span { offset: i - expected, length: 1 }),
                None => spans.push(Span { offset: i, length: 1 }),
            }
            next = Some(i + 1);
            deltas.push(n as i64 - previous);
            previous = n as i64;
        }
        (spans, deltas)
    }

    /// The upper bound of bucket `index` in this histogram's schema.
    pub fn upper_bound(&self, index: i32) -> f64 {
        upper_bound(index, self.schema)
    }
}

/// The index of the bucket holding `value` (> 0): the smallest `i` with `value <= bound(i)`.
pub fn bucket_index(value: f64, schema: i32) -> i32 {
    let mut i = (value.log2() * 2f64.powi(schema)).ceil() as i32;
    // log2 may be an ulp off at a bound; the bounds themselves decide.
    while upper_bound(i - 1, schema) >= value {
        i -= 1;
    }
    while upper_bound(i, schema) < value {
        i += 1;
    }
    i
}

/// 2^(index · 2^-schema), computed as Prometheus does: the power of two exact, the fraction from
/// the index's low bits.
pub fn upper_bound(index: i32, schema: i32) -> f64 {
    if schema <= 0 {
        return 2f64.powi(index << -schema);
    }
    let per_octave = 1i32 << schema;
    let octave = index.div_euclid(per_octave);
    let step = index.rem_euclid(per_octave);
    2f64.powf(step as f64 / per_octave as f64) * 2f64.powi(octave)
}

/// The relative error bound of a quantile read from a native histogram of `schema`, beside the
/// HDR histogram's own: a bucket's width over its lower bound.
pub fn relative_error(schema: i32) -> f64 {
    2f64.powf(2f64.powi(-schema)) - 1.0
}

/// `histogram_quantile(q, h)` as Prometheus 2.x computes it for a native histogram: the bucket
/// where the cumulative count reaches q·count, interpolated linearly inside it. Used by the tests
/// to check the stated error without a Prometheus.
pub fn prometheus_quantile(q: f64, h: &NativeHistogram) -> f64 {
    let rank = q * h.count as f64;
    let mut seen = h.zero_count as f64;
    if seen >= rank && h.zero_count > 0 {
        return ZERO_THRESHOLD * (rank / seen);
    }
    let mut last = (0.0, 0.0, 0.0);
    for (&i, &n) in &h.buckets {
        let (lower, upper) = (upper_bound(i - 1, h.schema), upper_bound(i, h.schema));
        let before = seen;
        seen += n as f64;
        last = (lower, upper, before);
        if seen >= rank {
            return lower + (upper - lower) * ((rank - before) / n as f64);
        }
    }
    last.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    #[test]
    fn a_bound_belongs_to_the_bucket_it_closes() {
        for schema in [-2, 0, 3, 8] {
            for i in [-300, -1, 0, 1, 7, 255, 256, 1000] {
                let bound = upper_bound(i, schema);
                if !bound.is_normal() || bound <= ZERO_THRESHOLD {
                    continue; // beyond what a latency in seconds reaches
                }
                assert_eq!(bucket_index(bound, schema), i, "schema {schema} bound {i}");
                assert_eq!(bucket_index(bound * (1.0 + 1e-12), schema), i + 1);
            }
        }
        assert_eq!(bucket_index(1.0, 8), 0);
        assert_eq!(bucket_index(2.0, 8), 256);
        assert_eq!(bucket_index(3.0, 0), 2);
    }

    #[test]
    fn every_value_lands_inside_its_bucket() {
        for v in 1..5000u64 {
            let value = v as f64 * 1e-6;
            let i = bucket_index(value, FINEST_SCHEMA);
            assert!(upper_bound(i - 1, FINEST_SCHEMA) < value && value <= upper_bound(i, FINEST_SCHEMA));
        }
    }

    #[test]
    fn counts_and_sum_are_kept() {
        let h = hdr(&[(40, 1000), (41, 10), (250, 3), (9_000, 1)]);
        let native = NativeHistogram::from_hdr(&h, 1e-6, FINEST_SCHEMA);
        assert_eq!(native.count, 1014);
        assert_eq!(native.buckets.values().sum::<u64>(), 1014);
        let sum: f64 = h.iter_recorded().map(|v| v.value_iterated_to() as f64 * 1e-6 * v.count_at_value() as f64).sum();
        assert!((native.sum - sum).abs() < 1e-12);
    }

    #[test]
    fn spans_and_deltas_encode_the_buckets() {
        let native = NativeHistogram {
            schema: 0,
            count: 10,
            sum: 0.0,
            zero_count: 0,
            buckets: [(-2, 1), (-1, 4), (3, 2), (4, 2), (10, 1)].into_iter().collect(),
        };
        let (spans, deltas) = native.spans_and_deltas();
        assert_eq!(
            spans,
            [Span { offset: -2, length: 2 }, Span { offset: 3, length: 2 }, Span { offset: 5, length: 1 }]
        );
        assert_eq!(deltas, [1, 3, -2, 0, -1]);
    }

    #[test]
    fn downscaling_keeps_every_observation_under_its_bound() {
        let h = hdr(&[(13, 5), (40, 1000), (41, 10), (250, 3), (9_000, 1), (123_456, 2)]);
        let fine = NativeHistogram::from_hdr(&h, 1e-6, FINEST_SCHEMA);
        for schema in [-4, 0, 3, 7] {
            let coarse = fine.downscaled(schema);
            assert_eq!(coarse.buckets.values().sum::<u64>(), fine.count);
            for v in h.iter_recorded() {
                let value = v.value_iterated_to() as f64 * 1e-6;
                assert!(coarse.buckets.contains_key(&bucket_index(value, schema)), "{value} at schema {schema}");
            }
        }
    }

    #[test]
    fn quantiles_agree_with_the_hdr_within_the_stated_error() {
        // A spread of latencies: most near 50 µs, a tail to 40 ms.
        let mut values = vec![];
        for k in 0..3000u64 {
            values.push((30 + k % 200, 1 + k % 7));
        }
        values.extend([(1_500, 40), (12_345, 9), (40_000, 2)]);
        let h = hdr(&values);
        let native = NativeHistogram::from_hdr(&h, 1e-6, FINEST_SCHEMA);
        for q in [0.5, 0.9, 0.99, 0.999] {
            let ours = h.value_at_quantile(q) as f64 * 1e-6;
            let theirs = prometheus_quantile(q, &native);
            let error = (theirs - ours).abs() / ours;
            assert!(error <= relative_error(FINEST_SCHEMA), "q {q}: {theirs} vs {ours} ({error})");
        }
    }
}
