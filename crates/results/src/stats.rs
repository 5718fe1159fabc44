//! Medians with 95% intervals, and the one rule that decides whether two cells differ. With the
//! few repetitions a benchmark affords (3–10), the interval of a median is taken from order
//! statistics (distribution-free, exact coverage from the binomial law) rather than a bootstrap,
//! which is too narrow for small samples. Two cells are compared by rank: the Hodges–Lehmann
//! ratio with the interval that inverts the Mann–Whitney test ([`rank_ratio`]).

use crate::model::Estimate;

/// The confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// The median of `values` (None when empty or when any value is not finite).
pub fn median(values: &[f64]) -> Option<f64> {
    let sorted = sorted(values)?;
    let n = sorted.len();
    Some(if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 })
}

/// The value at quantile `q` (0–1) of already sorted, non-empty `sorted`, by nearest rank: the
/// smallest value with at least ⌈q·n⌉ values at or below it (the first for q = 0), as an HDR
/// histogram reads a percentile. callbench's one quantile of samples: the probes' p10/p50/p90 of
/// their timings and the peers' percentiles of their own samples both use it.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The median and the narrowest symmetric order-statistic interval [x(k), x(n+1-k)] whose
/// coverage is at least 95% (for n ≤ 5 that is [min, max], covering 1 − 2⁻ⁿ⁺¹: 75% at n=3,
/// 93.75% at n=5; the interval is never narrower than the data can support).
pub fn estimate(values: &[f64]) -> Option<Estimate> {
    let sorted = sorted(values)?;
    let n = sorted.len();
    let median = median(&sorted)?;
    let k = order_statistic_rank(n);
    Some(Estimate { median, lo: sorted[k - 1], hi: sorted[n - k], n })
}

/// The largest k (1-based) with P(x(k) ≤ median ≤ x(n+1−k)) ≥ 95%, at least 1.
fn order_statistic_rank(n: usize) -> usize {
    let mut best = 1;
    for k in 1..=n.div_ceil(2) {
        // Coverage = 1 − 2·P(Binomial(n, ½) ≤ k − 1).
        let tail: f64 = (0..k).map(|i| binomial(n, i)).sum::<f64>() / 2f64.powi(n as i32);
        if 1.0 - 2.0 * tail >= LEVEL {
            best = k;
        } else {
            break;
        }
    }
    best
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

fn sorted(values: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v)
}

/// `a / b` by rank, the one rule every verdict uses: the Hodges–Lehmann estimate of the ratio
/// (the median of every pairwise ratio aᵢ/bⱼ, i.e. of the differences of logs) with the
/// distribution-free interval got by inverting the two-sided Mann–Whitney test: the k-th smallest
/// and largest pairwise ratios, k from the exact distribution of U. The interval excludes 1
/// exactly when the rank test finds a difference at its level, so ratio and verdict cannot
/// disagree. None when a side is empty or holds a value ≤ 0 (no log).
pub fn rank_ratio(a: &[f64], b: &[f64]) -> Option<RankRatio> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    let mut d: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| x.ln() - y.ln())).collect();
    d.sort_by(|x, y| x.total_cmp(y));
    let (k, coverage) = mann_whitney_rank(a.len(), b.len());
    let n = d.len();
    let mid = if n % 2 == 1 { d[n / 2] } else { (d[n / 2 - 1] + d[n / 2]) / 2.0 };
    let estimate = Estimate { median: mid.exp(), lo: d[k - 1].exp(), hi: d[n - k].exp(), n: a.len().min(b.len()) };
    Some(RankRatio { estimate, coverage, decidable: coverage >= LEVEL })
}

/// A ratio by rank, and what its interval can say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankRatio {
    pub estimate: Estimate,
    /// The interval's real coverage (at least 95% when `decidable`).
    pub coverage: f64,
    /// False when the repetitions are too few for any interval to reach 95% (3 against 3: the
    /// most extreme ranks have p = 0.10): no verdict either way.
    pub decidable: bool,
}

impl RankRatio {
    /// True when the interval lies wholly above or below 1 (and can say so at 95%).
    pub fn significant(&self) -> bool {
        self.decidable && (self.estimate.lo > 1.0 || self.estimate.hi < 1.0)
    }
}

/// The largest k whose interval [d(k), d(mn+1−k)] covers at least 95% (coverage 1 − 2·P(U ≤ k−1)
/// under no difference), with its coverage; k = 1 (the whole range) with its lower coverage when
/// even that is short of 95%. Exact counts of U up to 400 pairs, the normal approximation above.
fn mann_whitney_rank(m: usize, n: usize) -> (usize, f64) {
    let pairs = m * n;
    if pairs > EXACT_PAIRS {
        return (normal_rank(m, n), LEVEL);
    }
    let counts = u_counts(m, n);
    let total: f64 = counts.iter().sum();
    // coverage(k) = 1 − 2·P(U ≤ k − 1)
    let coverage = |k: usize| 1.0 - 2.0 * counts[..k].iter().sum::<f64>() / total;
    let mut k = 1;
    while k < pairs.div_ceil(2) && coverage(k + 1) >= LEVEL {
        k += 1;
    }
    (k, coverage(k))
}

/// Up to this many pairs U's distribution is counted exactly (20 against 20).
const EXACT_PAIRS: usize = 400;

/// k from the normal approximation of U (mean mn/2, variance mn(m+n+1)/12), for large samples.
fn normal_rank(m: usize, n: usize) -> usize {
    let pairs = m * n;
    let sd = ((pairs * (m + n + 1)) as f64 / 12.0).sqrt();
    ((pairs as f64 / 2.0 - 1.959_964 * sd).floor() as usize).clamp(1, pairs.div_ceil(2))
}

/// How many orderings of m values of one side and n of the other give each value of the
/// Mann–Whitney U (0..=m·n): f(i, j, u) = f(i − 1, j, u − j) + f(i, j − 1, u).
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    let mut f: Vec<Vec<Vec<f64>>> = vec![vec![vec![]; n + 1]; m + 1];
    for i in 0..=m {
        for j in 0..=n {
            f[i][j] = if i == 0 || j == 0 {
                vec![1.0]
            } else {
                let mut v = vec![0.0; i * j + 1];
                for (u, c) in f[i - 1][j].iter().enumerate() {
                    v[u + j] += c;
                }
                for (u, c) in f[i][j - 1].iter().enumerate() {
                    v[u] += c;
                }
                v
            };
        }
    }
    f.swap_remove(m).swap_remove(n)
}

/// `e` with its interval widened to at least ±`floor` × median (a systematic share the
/// repetitions cannot show).
pub fn widen(e: Estimate, floor: f64) -> Estimate {
    let margin = (e.median * floor).abs();
    Estimate { lo: e.lo.min(e.median - margin), hi: e.hi.max(e.median + margin), ..e }
}

/// How far an interval may spread around its median (relative) before the figure is called noisy.
pub const NOISY_SPREAD: f64 = 0.10;

/// A figure whose interval reaches more than 10% away from its median on either side (too few
/// or too scattered repetitions to rank it against close neighbours). The farther side counts,
/// not the half-width: one disturbed repetition well above four tight ones is noise, and it can
/// move a median by several percent (bench/results/methodology-2026-11.md#noisy-by-the-farther-side).
pub fn is_noisy(e: &Estimate) -> bool {
    let reach = (e.hi - e.median).max(e.median - e.lo);
    e.n < 2 || e.median == 0.0 || reach > NOISY_SPREAD * e.median.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_is_the_smallest_value_with_q_of_the_values_at_or_below_it() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        let at = |q| nearest_rank(&s, q);
        assert_eq!(
            (at(0.0), at(0.1), at(0.5), at(0.9), at(0.99), at(0.995), at(1.0)),
            (1.0, 10.0, 50.0, 90.0, 99.0, 100.0, 100.0)
        );
        assert_eq!((nearest_rank(&[7.0], 0.5), nearest_rank(&[1.0, 2.0, 3.0], 0.5)), (7.0, 2.0));
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
    }

    // The seeded generator: the Monte Carlo checks give the same answer every run.
    use callbench_primitives::rng::Rng;

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn small_samples_get_the_whole_range() {
        let e = estimate(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!((e.median, e.lo, e.hi, e.n), (11.0, 9.0, 13.0, 5));
    }

    #[test]
    fn larger_samples_drop_the_extremes_with_95_percent_coverage() {
        // n = 10: k = 2 covers 97.9%, k = 3 only 89.1%.
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = estimate(&values).unwrap();
        assert_eq!((e.lo, e.hi), (2.0, 9.0));
        assert_eq!(order_statistic_rank(20), 6); // 95.9%; k = 7 would be 88.5%
    }

    #[test]
    fn coverage_of_the_median_interval_is_at_least_95_percent_for_n_6_and_up() {
        // Monte Carlo on a skewed distribution: the interval must contain the true median.
        let mut rng = Rng::new(7);
        for n in [6usize, 9, 15] {
            let trials = 4000;
            let mut covered = 0;
            for _ in 0..trials {
                // Exponential(1): median ln 2.
                let sample: Vec<f64> =
                    (0..n).map(|_| -((rng.next_u64() as f64 + 1.0) / (u64::MAX as f64 + 2.0)).ln()).collect();
                let e = estimate(&sample).unwrap();
                if e.lo <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= e.hi {
                    covered += 1;
                }
            }
            let coverage = covered as f64 / trials as f64;
            assert!(coverage > 0.94, "n={n}: coverage {coverage}");
        }
    }

    #[test]
    fn the_rank_interval_uses_the_exact_mann_whitney_ranks() {
        // 5 against 5: 252 orderings; [d(3), d(23)] of the 25 pairwise differences covers 96.8%.
        assert_eq!(u_counts(5, 5).iter().sum::<f64>(), 252.0);
        let (k, coverage) = mann_whitney_rank(5, 5);
        assert_eq!(k, 3);
        assert!((coverage - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        // k is one more than the two-sided 5% critical value of U in the published tables.
        for (m, n, critical_u) in [(4, 5, 1), (6, 6, 5), (7, 7, 8), (8, 8, 13), (9, 9, 17), (10, 10, 23), (5, 10, 8)] {
            assert_eq!(mann_whitney_rank(m, n).0, critical_u + 1, "{m} against {n}");
            assert_eq!(mann_whitney_rank(n, m).0, critical_u + 1, "{n} against {m}");
        }
        assert_eq!(mann_whitney_rank(20, 20).0, 128, "the table's 127, counted exactly");
        // Past the exact counts the normal approximation takes over, one rank away at most.
        assert!((normal_rank(20, 20) as i64 - 128).abs() <= 1, "{}", normal_rank(20, 20));
        // 3 against 3: even the whole range covers only 90%; 3 against 4, 94.3%.
        let (k, coverage) = mann_whitney_rank(3, 3);
        assert_eq!((k, (coverage * 100.0).round()), (1, 90.0));
        assert!(mann_whitney_rank(3, 4).1 < LEVEL && mann_whitney_rank(4, 4).1 >= LEVEL);
    }

    #[test]
    fn rank_ratio_and_its_verdict_agree_by_construction() {
        let a = [200.0, 210.0, 190.0, 205.0, 195.0];
        let b = [100.0, 104.0, 98.0, 101.0, 99.0];
        let r = rank_ratio(&a, &b).unwrap();
        assert!((r.estimate.median - 2.0).abs() < 0.05, "{r:?}");
        assert!(r.estimate.lo > 1.0 && r.significant());
        // 5 against 5: the 3rd smallest and largest of the 25 ratios.
        let mut ratios: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| x / y)).collect();
        ratios.sort_by(f64::total_cmp);
        assert!((r.estimate.lo - ratios[2]).abs() < 1e-12 && (r.estimate.hi - ratios[22]).abs() < 1e-12);
        assert!((r.estimate.median - ratios[12]).abs() < 1e-12);
        let same = rank_ratio(&[10.0, 11.0, 9.0, 10.5, 9.5], &[10.2, 9.8, 10.1, 11.2, 9.1]).unwrap();
        assert!(same.estimate.lo < 1.0 && same.estimate.hi > 1.0 && !same.significant());
        let few = rank_ratio(&[200.0, 210.0, 190.0], &[100.0, 104.0, 98.0]).unwrap();
        assert!(!few.decidable && !few.significant(), "3 against 3 cannot reach 95%: {few:?}");
        assert!((few.coverage - 0.9).abs() < 1e-12, "its real coverage: {few:?}");
        assert!(rank_ratio(&a, &[0.0]).is_none());
    }

    /// Log-normal-ish repetitions around `scale` (±10%, uniform).
    fn draw(rng: &mut Rng, scale: f64) -> f64 {
        scale * (1.0 + 0.2 * ((rng.next_u64() as f64 / u64::MAX as f64) - 0.5))
    }

    #[test]
    fn the_rank_interval_covers_the_true_ratio_95_percent_of_the_time() {
        let mut rng = Rng::new(11);
        for (m, n) in [(5, 5), (7, 7), (9, 9), (4, 6), (25, 25)] {
            let (trials, mut covered) = (3000, 0);
            for _ in 0..trials {
                // The true ratio is 2.
                let a: Vec<f64> = (0..m).map(|_| draw(&mut rng, 2.0)).collect();
                let b: Vec<f64> = (0..n).map(|_| draw(&mut rng, 1.0)).collect();
                let e = rank_ratio(&a, &b).unwrap().estimate;
                covered += usize::from(e.lo <= 2.0 && 2.0 <= e.hi);
            }
            let coverage = covered as f64 / trials as f64;
            assert!(coverage > 0.935, "{m} against {n}: {coverage}");
        }
    }

    #[test]
    fn with_no_difference_a_side_is_named_higher_at_most_5_percent_of_the_time() {
        let mut rng = Rng::new(13);
        for (m, n) in [(5, 5), (9, 9), (3, 3)] {
            let (trials, mut named) = (4000, 0);
            for _ in 0..trials {
                let a: Vec<f64> = (0..m).map(|_| draw(&mut rng, 1.0)).collect();
                let b: Vec<f64> = (0..n).map(|_| draw(&mut rng, 1.0)).collect();
                named += usize::from(rank_ratio(&a, &b).unwrap().significant());
            }
            assert!((named as f64 / trials as f64) < 0.06, "{m} against {n}: {named}/{trials}");
        }
    }

    #[test]
    fn the_floor_widens_narrow_intervals_only() {
        let e = Estimate { median: 100.0, lo: 99.0, hi: 120.0, n: 5 };
        let w = widen(e, 0.05);
        assert_eq!((w.lo, w.hi, w.median), (95.0, 120.0, 100.0));
        assert_eq!(widen(e, 0.0), e);
    }

    #[test]
    fn wide_intervals_are_noisy() {
        assert!(is_noisy(&Estimate { median: 100.0, lo: 70.0, hi: 130.0, n: 5 }));
        assert!(!is_noisy(&Estimate { median: 100.0, lo: 95.0, hi: 104.0, n: 5 }));
        assert!(is_noisy(&Estimate { median: 100.0, lo: 100.0, hi: 100.0, n: 1 }));
        // One-sided: a half-width of 9.6% but one repetition 14% above the median.
        assert!(is_noisy(&Estimate { median: 38.1, lo: 36.2, hi: 43.5, n: 5 }));
    }
}
