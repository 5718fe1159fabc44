//! The report's content, once, as plain-text blocks: the Markdown and HTML renderers only differ in
//! how they write these blocks (and HTML adds the charts where a [`Block::Charts`] stands).

pub mod blocks;
mod cells;
pub mod comparisons;
mod machine;
pub mod references;
mod reproducibility;
mod round_trips;
mod tail;
mod tools;

use crate::names;
use callbench_results::format;
use callbench_results::model::Results;

pub use blocks::{Block, Column, Row, RowMark, Table};

/// The whole report.
pub fn report(r: &Results) -> Vec<Block> {
    let mut blocks = vec![Block::Title(format!("callbench: {}", r.suite.name))];
    if let Some(banner) = banner(r) {
        blocks.push(Block::Banner(banner));
    }
    let answer = crate::summary::answer::lines(r);
    if !answer.is_empty() {
        blocks.push(Block::Heading("The answer".into()));
        blocks.push(Block::Paragraph(answer[0].clone()));
        blocks.push(Block::List(answer[1..].to_vec()));
        blocks.push(Block::AnswerCharts);
    }
    if !r.seeds.is_empty() {
        blocks.push(Block::Heading("The seed articles, reproduced under their conditions".into()));
        blocks.extend(seed_blocks(&r.seeds));
    }
    let found = crate::summary::sentences(r);
    if !found.is_empty() {
        blocks.push(Block::Heading("What this run found".into()));
        blocks.push(Block::List(found));
    }
    if !r.suite.description.trim().is_empty() {
        blocks.push(Block::Paragraph(r.suite.description.clone()));
    }
    blocks.push(Block::Paragraph(overview(r)));
    for exp in &r.experiments {
        blocks.extend(cells::experiment(r, exp));
        blocks.extend(tail::section(r, exp));
        blocks.extend(tools::section(r, exp));
        blocks.extend(round_trips::section(r, exp));
    }
    blocks.extend(orphan_cells(r));
    blocks.extend(references::table(r));
    let all: Vec<Block> = r.experiments.iter().flat_map(|exp| comparisons::experiment(r, exp)).collect();
    if !all.is_empty() {
        blocks.push(Block::Heading("All comparisons".into()));
        blocks.push(Block::Paragraph(comparisons::RULE.into()));
        blocks.extend(all);
    }
    blocks.extend(machine::machine(r));
    blocks.extend(reproducibility::servers(r));
    blocks.extend(reproducibility::record(r));
    blocks
}

/// Each seed figure as blocks of its own, which read at any width (a table of six prose columns
/// scrolled sideways): a subheading, then the article's figure, ours, why, and the command.
pub fn seed_blocks(rows: &[callbench_results::model::SeedRow]) -> Vec<Block> {
    let mut blocks = vec![Block::Paragraph(crate::summary::SEED_RATIO_RULE.into())];
    for row in rows {
        blocks.push(Block::Subheading(format!("Seed {}: {}", row.seed, row.what)));
        blocks.push(Block::List(vec![
            format!("The article: {}", row.article),
            format!("Reproduced: {}", row.here),
            format!("Why: {}", row.why),
            format!("Command: {}", row.command),
        ]));
    }
    blocks
}

/// The interrupted / partial warning.
fn banner(r: &Results) -> Option<String> {
    if r.interrupted {
        Some("Interrupted: the run was stopped before the end. The cells measured so far are valid; the others are missing or marked interrupted.".into())
    } else if !r.complete {
        Some(
            "Partial results: the run did not complete (it is still going, or it failed). Some cells may be missing."
                .into(),
        )
    } else {
        None
    }
}

/// One sentence on what was run, how often, and what failed.
fn overview(r: &Results) -> String {
    let failed = r.cells.iter().filter(|c| names::is_failure(c.status)).count();
    let noisy = r.cells.iter().filter(|c| c.noisy).count();
    let mut text = format!(
        "{} experiments, {} cells, {} repetitions per cell. Every figure is the median of the repetitions with its 95% interval [lo – hi] (exact counts such as bytes per call have none); a comparison names the higher side only when the 95% interval of its ratio excludes 1.",
        r.experiments.len(),
        r.cells.len(),
        r.suite.repetitions
    );
    if r.cells.iter().any(|c| !c.pooled.is_empty()) {
        text.push_str(" An open-loop cell's latency percentiles are of all its repetitions' calls merged, the interval from resampling its repetitions (bootstrap): one repetition's tail rests on too few calls.");
    }
    if failed > 0 {
        text.push_str(&format!(" {} not complete (see their status).", cells(failed, "is", "are")));
    }
    if noisy > 0 {
        text.push_str(&format!(
            " {} marked noisy: a 95% interval reaching more than {:.0}% from its median cannot be ranked against close neighbours.",
            cells(noisy, "is", "are"),
            callbench_results::stats::NOISY_SPREAD * 100.0
        ));
    }
    text
}

/// `1 cell is`, `2 cells are`.
fn cells(n: usize, one: &str, several: &str) -> String {
    if n == 1 {
        format!("1 cell {one}")
    } else {
        format!("{n} cells {several}")
    }
}

/// Cells whose experiment is not in the list (a hand-edited or truncated file): shown, not dropped.
fn orphan_cells(r: &Results) -> Vec<Block> {
    let orphans: Vec<_> = r.cells.iter().filter(|c| r.experiment(&c.experiment).is_none()).collect();
    if orphans.is_empty() {
        return vec![];
    }
    let items = orphans
        .iter()
        .map(|c| {
            let p50 = c
                .summary
                .get("latency_p50_us")
                .map_or(format::MISSING.into(), |e| format::estimate("latency_p50_us", e));
            format!("{} (experiment {}): {}, p50 {}", c.id, c.experiment, names::status_with_error(c), p50)
        })
        .collect();
    vec![Block::Heading("Cells of unknown experiments".into()), Block::List(items)]
}
