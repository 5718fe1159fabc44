//! Where the hypervisor had put the client's and the server's CPUs during a repetition, read from
//! the cache line's round trip taken before and after it (`cpus_round_trip_ns`): near (sharing a
//! core) or far, several times slower (bench/results/methodology-2026-11.md#placement-and-noisy-cells).
//! The runner measures again the repetitions outside their experiment's usual placement; the
//! summary counts them. One rule for both, here.

use crate::model::RunMetrics;

/// Round trips this many times apart are two placements of the CPUs: the two placements are
/// several times apart, and within one the round trips spread by well under this
/// (bench/results/code-notes-2026-12.md#cache-line-round-trips-between-the-cpus).
pub const DISTANCE_CHANGED: f64 = 1.5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Near,
    Far,
    /// Near at one end of the repetition and far at the other: it moved while measured.
    Moved,
}

/// The round trip that separates near from far among `trips`: the widest gap between two
/// neighbouring values once sorted, on a log scale, when it is [`DISTANCE_CHANGED`] wide or
/// more. None when all were one placement (or fewer than two were measured).
pub fn boundary(trips: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = trips.iter().copied().filter(|t| t.is_finite() && *t > 0.0).collect();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = sorted.windows(2).map(|w| (w[0], w[1])).max_by(|a, b| (a.1 / a.0).total_cmp(&(b.1 / b.0)))?;
    (hi >= lo * DISTANCE_CHANGED).then(|| (lo * hi).sqrt())
}

/// Every round trip of `runs` (before and after each), for [`boundary`].
pub fn trips<'a>(runs: impl IntoIterator<Item = &'a RunMetrics>) -> Vec<f64> {
    runs.into_iter().filter_map(|r| r.cpus_round_trip_ns).flatten().collect()
}

/// Where `run` was, against `boundary`; None when its round trips were not measured.
pub fn of(run: &RunMetrics, boundary: f64) -> Option<Placement> {
    let [before, after] = run.cpus_round_trip_ns?;
    Some(match (before < boundary, after < boundary) {
        (true, true) => Placement::Near,
        (false, false) => Placement::Far,
        _ => Placement::Moved,
    })
}

/// The placement most of `runs` had (near on a tie: the machine's faster state), or None when
/// none had one.
pub fn usual<'a>(runs: impl IntoIterator<Item = &'a RunMetrics>, boundary: f64) -> Option<Placement> {
    let (mut near, mut far) = (0, 0);
    for run in runs {
        match of(run, boundary) {
            Some(Placement::Near) => near += 1,
            Some(Placement::Far) => far += 1,
            _ => {}
        }
    }
    match (near, far) {
        (0, 0) => None,
        (near, far) if near >= far => Some(Placement::Near),
        _ => Some(Placement::Far),
    }
}

/// The median of the round trips of `runs` placed `placement` (both ends), for the sentences.
pub fn median_trip<'a>(
    runs: impl IntoIterator<Item = &'a RunMetrics>,
    boundary: f64,
    placement: Placement,
) -> Option<f64> {
    let placed: Vec<f64> = runs
        .into_iter()
        .filter(|r| of(r, boundary) == Some(placement))
        .flat_map(|r| r.cpus_round_trip_ns)
        .flatten()
        .collect();
    crate::stats::median(&placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(before: f64, after: f64) -> RunMetrics {
        RunMetrics { cpus_round_trip_ns: Some([before, after]), ..Default::default() }
    }

    #[test]
    fn the_widest_gap_separates_near_from_far_and_one_placement_has_none() {
        // A run's sequential experiment: near ~65, far ~210, a few caught moving in the probe.
        let split = boundary(&[62.0, 65.0, 66.0, 78.0, 130.0, 136.0, 201.0, 212.0, 252.0]).unwrap();
        assert!(split > 78.0 && split < 130.0, "{split}");
        // All far, spread 1.5x from end to end but in small steps: one placement.
        assert_eq!(boundary(&[203.0, 209.0, 216.0, 230.0, 251.0, 280.0, 304.0]), None);
        assert_eq!(boundary(&[65.0]), None);
        assert_eq!(boundary(&[]), None);
    }

    #[test]
    fn a_repetition_is_near_far_or_moved_and_the_usual_placement_is_the_commoner() {
        assert_eq!(of(&run(65.0, 66.0), 100.0), Some(Placement::Near));
        assert_eq!(of(&run(220.0, 210.0), 100.0), Some(Placement::Far));
        assert_eq!(of(&run(65.0, 286.0), 100.0), Some(Placement::Moved));
        assert_eq!(of(&RunMetrics::default(), 100.0), None);
        let runs = [run(65.0, 66.0), run(220.0, 210.0), run(230.0, 215.0), run(65.0, 286.0)];
        assert_eq!(usual(&runs, 100.0), Some(Placement::Far));
        assert_eq!(usual(&runs[..2], 100.0), Some(Placement::Near), "a tie goes to the faster state");
        assert_eq!(median_trip(&runs, 100.0, Placement::Far), Some(217.5));
        assert_eq!(usual(&[RunMetrics::default()], 100.0), None);
    }
}
