//! Percentiles of all repetitions' calls together, with a 95% interval from resampling the
//! repetitions: an open-loop cell's tail. A p99 of one short repetition rests on a few dozen
//! calls, so one stall of the machine moves it, and the median of nine such p99s scatters with
//! them; the p99 of the nine repetitions' calls merged rests on nine times as many. Its interval
//! comes from the percentile bootstrap over whole repetitions (calls within a repetition are not
//! independent: a stall delays a run of them), drawing the repetitions with replacement, merging
//! the drawn ones' histograms and reading the percentile again. With as few as nine repetitions a
//! bootstrap interval is somewhat narrower than a 95% one should be; the floor a suite sets
//! (`interval_floor`) widens it like any other.

use crate::model::Estimate;
use crate::stats::{nearest_rank, LEVEL};
use callbench_primitives::rng::Rng;

/// How many resamples make an interval: the 2.5% and 97.5% points then rest on 50 each.
pub const RESAMPLES: usize = 2000;

/// The repetitions' latency histograms on one grid: every value recorded by any of them, in
/// ascending order, and each repetition's count at each.
pub struct Repetitions {
    values: Vec<f64>,
    /// `counts[k * reps + i]`: repetition i's count at `values[k]`.
    counts: Vec<u64>,
    reps: usize,
    totals: Vec<u64>,
}

impl Repetitions {
    /// From each repetition's recorded (value, count) pairs; None with fewer than two repetitions
    /// or when one recorded no call (its calls could not stand for a ninth of the cell's).
    pub fn new(recorded: &[Vec<(f64, u64)>]) -> Option<Repetitions> {
        let reps = recorded.len();
        if reps < 2 || recorded.iter().any(|r| r.iter().all(|&(_, n)| n == 0)) {
            return None;
        }
        let mut values: Vec<f64> = recorded.iter().flatten().map(|&(v, _)| v).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        values.sort_by(f64::total_cmp);
        values.dedup();
        let mut counts = vec![0u64; values.len() * reps];
        for (i, rep) in recorded.iter().enumerate() {
            for &(v, n) in rep {
                let k = values.partition_point(|&x| x < v);
                counts[k * reps + i] += n;
            }
        }
        let totals = recorded.iter().map(|r| r.iter().map(|&(_, n)| n).sum()).collect();
        Some(Repetitions { values, counts, reps, totals })
    }

    /// The value at each quantile of `qs` (ascending, 0–1) of the repetitions merged, repetition i
    /// counted `weights[i]` times; nearest rank, as an HDR histogram reads a percentile.
    fn quantiles(&self, weights: &[u32], qs: &[f64], out: &mut [f64]) {
        let total: u64 = self.totals.iter().zip(weights).map(|(&t, &w)| t * u64::from(w)).sum();
        let mut q = 0;
        let mut seen = 0u64;
        for (k, &value) in self.values.iter().enumerate() {
            let row = &self.counts[k * self.reps..(k + 1) * self.reps];
            seen += row.iter().zip(weights).map(|(&n, &w)| n * u64::from(w)).sum::<u64>();
            while q < qs.len() && seen >= rank(qs[q], total) {
                out[q] = value;
                q += 1;
            }
            if q == qs.len() {
                return;
            }
        }
        for o in &mut out[q..] {
            *o = *self.values.last().expect("at least one value");
        }
    }

    /// Each quantile of `qs` (ascending, 0–1) of all calls merged, with the percentile-bootstrap
    /// 95% interval over repetitions (`resamples` draws from a generator seeded with `seed`, so
    /// the same histograms give the same interval).
    pub fn estimates(&self, qs: &[f64], resamples: usize, seed: u64) -> Vec<Estimate> {
        let mut point = vec![0.0; qs.len()];
        self.quantiles(&vec![1; self.reps], qs, &mut point);
        let mut drawn: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); qs.len()];
        let mut rng = Rng::new(seed);
        let mut weights = vec![0u32; self.reps];
        let mut out = vec![0.0; qs.len()];
        for _ in 0..resamples {
            weights.fill(0);
            for _ in 0..self.reps {
                weights[(rng.next_u64() % self.reps as u64) as usize] += 1;
            }
            self.quantiles(&weights, qs, &mut out);
            for (d, &v) in drawn.iter_mut().zip(&out) {
                d.push(v);
            }
        }
        let tail = (1.0 - LEVEL) / 2.0;
        point
            .iter()
            .zip(&mut drawn)
            .map(|(&median, d)| {
                d.sort_by(f64::total_cmp);
                let (lo, hi) =
                    if d.is_empty() { (median, median) } else { (nearest_rank(d, tail), nearest_rank(d, 1.0 - tail)) };
                Estimate { median, lo: lo.min(median), hi: hi.max(median), n: self.reps }
            })
            .collect()
    }
}

/// The number of calls at or below the value at quantile `q` of `total` (at least one).
fn rank(q: f64, total: u64) -> u64 {
    ((q * total as f64).ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(values: &[(f64, u64)]) -> Vec<(f64, u64)> {
        values.to_vec()
    }

    #[test]
    fn the_point_is_the_percentile_of_all_calls_merged() {
        // 100 calls at 1..=100 µs split over two repetitions unevenly.
        let a: Vec<(f64, u64)> = (1..=30).map(|v| (f64::from(v), 1)).collect();
        let b: Vec<(f64, u64)> = (31..=100).map(|v| (f64::from(v), 1)).collect();
        let r = Repetitions::new(&[a, b]).unwrap();
        let e = r.estimates(&[0.5, 0.99, 1.0], 0, 1);
        assert_eq!(e.iter().map(|e| e.median).collect::<Vec<_>>(), vec![50.0, 99.0, 100.0]);
        assert!(e.iter().all(|e| e.lo == e.median && e.hi == e.median && e.n == 2));
    }

    #[test]
    fn one_stalled_repetition_of_nine_hardly_moves_the_merged_p99() {
        // Eight repetitions of 1,000 calls, 985 at 100 µs and 15 at 150; one where a stall held 1% at 2 ms.
        let quiet = rep(&[(100.0, 985), (150.0, 15)]);
        let stalled = rep(&[(100.0, 975), (150.0, 15), (2000.0, 10)]);
        let mut reps = vec![quiet; 8];
        reps.push(stalled);
        let e = &Repetitions::new(&reps).unwrap().estimates(&[0.99], RESAMPLES, 7)[0];
        assert_eq!(e.median, 150.0);
        // No resample lifts it: even the stalled repetition drawn nine times keeps 99% of its
        // calls at or below 150 µs.
        assert_eq!((e.lo, e.hi), (150.0, 150.0));
    }

    #[test]
    fn repetitions_that_disagree_widen_the_interval() {
        let reps: Vec<Vec<(f64, u64)>> = (1..=9).map(|i| rep(&[(100.0, 98), (f64::from(i) * 100.0, 2)])).collect();
        let e = &Repetitions::new(&reps).unwrap().estimates(&[0.99], RESAMPLES, 7)[0];
        // 900 calls: 884 at 100 µs, then 2 at each of 200..900: the 891st is at 500.
        assert_eq!(e.median, 500.0);
        assert!(e.lo < e.median && e.median < e.hi && e.lo >= 100.0, "{e:?}");
        // The same histograms, the same seed: the same interval.
        assert_eq!(e, &Repetitions::new(&reps).unwrap().estimates(&[0.99], RESAMPLES, 7)[0]);
    }

    #[test]
    fn too_few_or_empty_repetitions_give_no_pooled_figure() {
        assert!(Repetitions::new(&[rep(&[(1.0, 5)])]).is_none());
        assert!(Repetitions::new(&[rep(&[(1.0, 5)]), rep(&[])]).is_none());
        assert!(Repetitions::new(&[rep(&[(1.0, 5)]), rep(&[(f64::NAN, 1)])]).is_none());
    }
}
