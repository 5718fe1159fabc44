//! Rounds in which the machine, not a server, changed speed. Every cell of an experiment is
//! measured once per round, so when most of its cells moved the same way, beyond the noise limit,
//! in the same rounds, the spread that made them noisy is the machine's
//! (bench/results/methodology-2026-11.md#the-machine-changing-speed). Said in one sentence, with how many noisy cells
//! those rounds alone explain and, where it was measured, whether the two sides' CPUs had been
//! moved apart or together (see the runner's `cache_distance`).

use crate::names;
use callbench_results::model::{Cell, Experiment, Results};
use callbench_results::placement::{self, Placement, DISTANCE_CHANGED};
use callbench_results::stats::{self, NOISY_SPREAD};

/// Fewer cells than this moving together are not read as the machine: a p99 moves beyond the
/// noise limit from round to round on its own, and of three cells two then move together in most
/// rounds (bench/results/code-notes-2026-12.md#cells-moving-together-by-chance).
const MIN_MOVED: usize = 4;

/// `Sequential latency: in rounds 1–2, 9 of 12 cells' wall time per call was more than 10% below
/// their own medians at once: …`, or nothing when no round moved most cells together.
pub fn sentence(r: &Results, exp: &Experiment) -> Option<String> {
    let series = headline_series(r, exp);
    if series.len() < MIN_MOVED {
        return None;
    }
    let rounds = series[0].1.len();
    let mut moved: Vec<(usize, Direction, usize)> = vec![];
    for round in 0..rounds {
        let (mut above, mut below) = (0, 0);
        for (_, values) in &series {
            match direction(values, round) {
                Some(Direction::Above) => above += 1,
                Some(Direction::Below) => below += 1,
                None => {}
            }
        }
        // Most of the experiment's cells, one way: a server's own hiccup moves one cell.
        let together = |n: usize| n >= MIN_MOVED && n * 2 > series.len();
        if together(above) {
            moved.push((round, Direction::Above, above));
        } else if together(below) {
            moved.push((round, Direction::Below, below));
        }
    }
    if moved.is_empty() {
        return None;
    }
    let shifted: Vec<usize> = moved.iter().map(|(round, _, _)| *round).collect();
    let noisy: Vec<&&Cell> = series.iter().map(|(c, _)| c).filter(|c| c.noisy).collect();
    let explained = series.iter().filter(|(c, values)| c.noisy && !noisy_without(values, &shifted)).count();
    let fewest = moved.iter().map(|(_, _, n)| *n).min().unwrap_or(0);
    let directions: Vec<&str> = moved.iter().map(|(_, d, _)| d.word()).collect();
    let way = if directions.iter().all(|d| *d == directions[0]) { directions[0] } else { "above or below" };
    let mut text = format!(
        "{}: in {} {}, at least {fewest} of {} cells' {} was more than {:.0}% {way} their own medians at once: \
         the machine's speed changed during the experiment, not one server's (every cell was measured in every \
         round, so the comparisons saw the same changes)",
        exp.title,
        if shifted.len() == 1 { "round" } else { "rounds" },
        rounds_text(&shifted),
        series.len(),
        names::metric_label(&exp.headline),
        NOISY_SPREAD * 100.0,
    );
    if let Some(apart) = cpus_apart(&series, &shifted) {
        text.push_str(&apart);
    }
    if !noisy.is_empty() {
        text.push_str(&format!("; without those rounds {explained} of its {} noisy cells would not be", noisy.len()));
    }
    text.push('.');
    Some(text)
}

/// How far apart the client's and the server's CPUs were (a cache line's round trip, taken
/// around each repetition) in the moved rounds and in the others, when both were measured.
fn cpus_apart(series: &[(&Cell, Vec<f64>)], shifted: &[usize]) -> Option<String> {
    let (mut moved, mut others) = (vec![], vec![]);
    for (cell, _) in series {
        for (round, run) in cell.runs.iter().enumerate() {
            let Some(trips) = run.cpus_round_trip_ns else { continue };
            if shifted.contains(&round) { &mut moved } else { &mut others }.extend(trips);
        }
    }
    let (a, b) = (stats::median(&moved)?, stats::median(&others)?);
    let ratio = a.max(b) / a.min(b).max(1e-9);
    Some(if ratio >= DISTANCE_CHANGED {
        format!(
            "; the client's and the server's CPUs were {a:.0} ns apart in those rounds (a cache line's round trip, \
             median) and {b:.0} ns in the others: the hypervisor had moved them"
        )
    } else {
        format!("; the client's and the server's CPUs were as far apart in those rounds as in the others ({a:.0} vs {b:.0} ns, a cache line's round trip): the cause was elsewhere")
    })
}

/// Across the whole run: when the client's and the server's CPUs were near in some repetitions
/// and far in others (see [`placement::boundary`]), how many of each, how many are still outside
/// their experiment's usual placement after the runner measured them again, and which noisy
/// cells have repetitions in both placements.
pub fn placements(r: &Results) -> Option<String> {
    let runs = || r.cells.iter().flat_map(|c| &c.runs);
    let split = placement::boundary(&placement::trips(runs()))?;
    let count = |p: Placement| runs().filter(|run| placement::of(run, split) == Some(p)).count();
    let placed = runs().filter(|run| run.cpus_round_trip_ns.is_some()).count();
    let mut text = format!(
        "The hypervisor moved the client's and the server's CPUs during the run: in {} of {placed} repetitions they \
         were {:.0} ns apart (a cache line's round trip, median), in {} others {:.0} ns",
        count(Placement::Near),
        placement::median_trip(runs(), split, Placement::Near)?,
        count(Placement::Far),
        placement::median_trip(runs(), split, Placement::Far)?,
    );
    let moved = count(Placement::Moved);
    if moved > 0 {
        text.push_str(&format!(", and {moved} moved while measured"));
    }
    // Each experiment's repetitions outside its usual placement were measured again (by the
    // runner, for cells over loopback): what is left there is marked disturbed.
    let mut outside = 0;
    for exp in &r.experiments {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
        let Some(usual) = placement::usual(cells.iter().flat_map(|c| &c.runs), split) else { continue };
        outside += cells
            .iter()
            .flat_map(|c| &c.runs)
            .filter(|run| placement::of(run, split).is_some_and(|p| p != usual))
            .count();
    }
    text.push_str(&format!(
        "; {outside} {} outside {} experiment's usual placement after measuring again",
        if outside == 1 { "repetition is" } else { "repetitions are" },
        if outside == 1 { "its" } else { "their" },
    ));
    let both = |c: &&&Cell| {
        let placed: Vec<Placement> = c.runs.iter().filter_map(|run| placement::of(run, split)).collect();
        placed.iter().any(|p| *p != placed[0])
    };
    let noisy: Vec<&Cell> =
        r.cells.iter().filter(|c| c.noisy && c.runs.iter().any(|run| run.cpus_round_trip_ns.is_some())).collect();
    if !noisy.is_empty() {
        let spanning = noisy.iter().filter(both).count();
        text.push_str(&format!(
            "; {spanning} of the {} noisy cells that call a server have repetitions in more than one placement",
            noisy.len()
        ));
    }
    text.push('.');
    Some(text)
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Above,
    Below,
}

impl Direction {
    fn word(self) -> &'static str {
        match self {
            Direction::Above => "above",
            Direction::Below => "below",
        }
    }
}

/// The experiment's cells measured in every round, with their headline figure round by round
/// (a repetition measured again stays in its round's place).
fn headline_series<'a>(r: &'a Results, exp: &Experiment) -> Vec<(&'a Cell, Vec<f64>)> {
    let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.experiment == exp.id).collect();
    let rounds = cells.iter().map(|c| c.runs.len()).max().unwrap_or(0);
    if rounds < 3 {
        return vec![];
    }
    cells
        .into_iter()
        .filter(|c| c.runs.len() == rounds)
        .filter_map(|c| {
            let values: Vec<f64> = c.runs.iter().filter_map(|run| run.metric(&exp.headline)).collect();
            (values.len() == rounds && values.iter().all(|v| *v > 0.0)).then_some((c, values))
        })
        .collect()
}

/// How the round's figure sits against the cell's median, when beyond the noise limit.
fn direction(values: &[f64], round: usize) -> Option<Direction> {
    let median = stats::median(values)?;
    let off = values[round] / median - 1.0;
    if off > NOISY_SPREAD {
        Some(Direction::Above)
    } else if off < -NOISY_SPREAD {
        Some(Direction::Below)
    } else {
        None
    }
}

/// Whether the figures leaving out `rounds` are still noisy, by the rule the cell was judged by.
fn noisy_without(values: &[f64], rounds: &[usize]) -> bool {
    let kept: Vec<f64> = values.iter().enumerate().filter(|(i, _)| !rounds.contains(i)).map(|(_, v)| *v).collect();
    stats::estimate(&kept).is_none_or(|e| stats::is_noisy(&e))
}

/// `1–2, 5` (rounds counted from 1).
fn rounds_text(rounds: &[usize]) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < rounds.len() {
        let mut j = i;
        while j + 1 < rounds.len() && rounds[j + 1] == rounds[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}–{}", rounds[i] + 1, rounds[j] + 1) } else { format!("{}", rounds[i] + 1) });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_read_as_ranges_from_one() {
        assert_eq!(rounds_text(&[0, 1]), "1–2");
        assert_eq!(rounds_text(&[2, 3, 4, 7]), "3–5, 8");
        assert_eq!(rounds_text(&[5]), "6");
    }

    #[test]
    fn a_round_is_placed_against_the_cells_own_median() {
        let values = [20.0, 20.5, 25.0, 25.5, 25.0, 25.2, 24.9];
        assert!(direction(&values, 0) == Some(Direction::Below));
        assert!(direction(&values, 3).is_none());
        assert!(noisy_without(&[20.0, 20.5, 25.0, 25.5, 25.0, 25.2, 24.9, 25.1, 25.0], &[]));
        assert!(!noisy_without(&[20.0, 20.5, 25.0, 25.5, 25.0, 25.2, 24.9, 25.1, 25.0], &[0, 1]));
    }
}
