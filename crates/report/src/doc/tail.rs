//! Noisy cells whose headline is a tail percentile of all their repetitions' calls merged (an open
//! loop's p99): where that percentile sits among the calls, and how far each repetition's own
//! moved. A percentile between a steady body and a far tail moves with how many calls each
//! repetition had in the tail (on a VM: how often the machine stopped a CPU), which the interval
//! alone does not say (bench/results/machine-stops-*.md).

use super::blocks::Block;
use callbench_results::format;
use callbench_results::model::{Cell, Experiment, Results};

/// A paragraph and a line per such cell, or nothing.
pub fn section(r: &Results, exp: &Experiment) -> Vec<Block> {
    let lines: Vec<String> =
        r.cells.iter().filter(|c| c.experiment == exp.id).filter_map(|c| sentence(exp, c)).collect();
    if lines.is_empty() {
        return vec![];
    }
    let label = crate::names::metric_label(&exp.headline);
    vec![
        Block::Paragraph(format!(
            "Where each noisy cell's {label} sits among its calls (all repetitions merged), and each repetition's own: \
             a percentile between a steady body and a far tail moves with how many calls each repetition had in the \
             tail, not with what a usual call costs."
        )),
        Block::List(lines),
    ]
}

/// `students/rust-actix: p99 123 [62 – 300] µs, between p95 23.0 µs and p99.5 878 µs, 38.2× apart;
/// the repetitions' own p99 42.0 µs to 613 µs.`
fn sentence(exp: &Experiment, c: &Cell) -> Option<String> {
    let metric = exp.headline.as_str();
    let q = tail_percentile(metric)?;
    if !c.noisy || !c.pooled.iter().any(|m| m == metric) {
        return None;
    }
    let merged = c.summary.get(metric)?;
    let below = c.spectrum.iter().rev().find(|(p, _)| *p < q)?;
    let above = c.spectrum.iter().find(|(p, _)| *p > q)?;
    let own: Vec<f64> = c.runs.iter().filter_map(|run| run.metric(metric)).collect();
    let (lo, hi) = own.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let name = c.id.strip_prefix(&format!("{}/", exp.id)).unwrap_or(&c.id);
    let p = |q: f64| format!("p{}", format::compact(q));
    let mut text = format!(
        "{name}: {} {}, between {} {} and {} {}",
        p(q),
        format::estimate(metric, merged),
        p(below.0),
        format::duration_us(below.1),
        p(above.0),
        format::duration_us(above.1),
    );
    if below.1 > 0.0 {
        text.push_str(&format!(", {}× apart", format::significant(above.1 / below.1)));
    }
    if !own.is_empty() {
        text.push_str(&format!(
            "; the repetitions' own {} {} to {}",
            p(q),
            format::duration_us(lo),
            format::duration_us(hi)
        ));
    }
    text.push('.');
    Some(text)
}

/// 99 for `latency_p99_us`, 99.9 for `latency_p99.9_us`; None below p90 or for other metrics.
fn tail_percentile(metric: &str) -> Option<f64> {
    let q: f64 = metric.strip_prefix("latency_p")?.strip_suffix("_us")?.parse().ok()?;
    (q >= 90.0).then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_results::model::{Estimate, Latency, RunMetrics};

    fn fixed_rate_cell(noisy: bool, pooled: bool) -> (Experiment, Cell) {
        let exp = Experiment {
            id: "fixed-rate".into(),
            title: "fixed rate".into(),
            description: String::new(),
            seeds: vec![],
            sweep: None,
            headline: "latency_p99_us".into(),
            references: vec![],
            answer: None,
            skipped: None,
            cpus: None,
        };
        let runs = [55.0, 446.0, 42.0, 613.0]
            .iter()
            .map(|p99| RunMetrics {
                latency_us: Some(Latency { p99: *p99, ..Default::default() }),
                ..Default::default()
            })
            .collect();
        let merged = Estimate { median: 123.0, lo: 62.0, hi: 300.0, n: 4 };
        let cell = Cell {
            summary: [("latency_p99_us".to_string(), merged)].into(),
            spectrum: vec![(50.0, 18.0), (95.0, 23.0), (99.0, 123.0), (99.5, 878.0), (99.9, 2859.0)],
            pooled: if pooled { vec!["latency_p99_us".into()] } else { vec![] },
            noisy,
            ..crate::test_cell::cell("fixed-rate/students/rust-actix", "fixed-rate", runs)
        };
        (exp, cell)
    }

    #[test]
    fn a_noisy_pooled_p99_is_placed_between_its_neighbours_and_the_repetitions_own() {
        let (exp, cell) = fixed_rate_cell(true, true);
        assert_eq!(
            sentence(&exp, &cell).unwrap(),
            "students/rust-actix: p99 123 [62 – 300] µs, between p95 23.0 µs and p99.5 878 µs, 38.2× apart; \
             the repetitions' own p99 42.0 µs to 613 µs."
        );
    }

    #[test]
    fn steady_or_not_pooled_cells_and_other_headlines_say_nothing() {
        let (exp, cell) = fixed_rate_cell(false, true);
        assert_eq!(sentence(&exp, &cell), None);
        let (exp, cell) = fixed_rate_cell(true, false);
        assert_eq!(sentence(&exp, &cell), None);
        let (mut exp, cell) = fixed_rate_cell(true, true);
        exp.headline = "latency_p50_us".into();
        assert_eq!(sentence(&exp, &cell), None);
        assert_eq!(tail_percentile("latency_p99.9_us"), Some(99.9));
        assert_eq!(tail_percentile("throughput_per_s"), None);
    }
}
