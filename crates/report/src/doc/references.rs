//! "What the seed article reported / what callbench measured here", over every experiment.

use super::blocks::{Block, RowMark, Table};
use crate::names;
use callbench_results::format;
use callbench_results::model::{Cell, CellStatus, Experiment, Reference, Results};

pub const TITLE: &str = "What the seed article reported / what callbench measured here";
pub const NOT_MEASURED: &str = "not measured";

pub fn table(r: &Results) -> Vec<Block> {
    let refs: Vec<(&Experiment, &Reference)> =
        r.experiments.iter().flat_map(|e| e.references.iter().map(move |rf| (e, rf))).collect();
    if refs.is_empty() {
        return vec![];
    }
    let mut table = Table::new(&[
        ("seed", false),
        ("what", false),
        ("the article reported", true),
        ("callbench measured here", true),
        ("measured by", false),
        ("note", false),
    ]);
    for (exp, rf) in refs {
        let (ours, by, mark) = match measured(r, exp, rf) {
            Measured::Figure { text, by } => (text, by, RowMark::Normal),
            Measured::Not { why, by } => (why, by, RowMark::Failed),
        };
        table.push(vec![rf.seed.clone(), rf.what.clone(), rf.article.clone(), ours, by, rf.note.clone()], mark);
    }
    vec![
        Block::Heading(TITLE.into()),
        Block::Paragraph("The articles measured on other machines and networks: compare the ratios between servers, not the absolute figures.".into()),
        Block::Table(table),
    ]
}

enum Measured {
    Figure { text: String, by: String },
    Not { why: String, by: String },
}

fn measured(r: &Results, exp: &Experiment, rf: &Reference) -> Measured {
    let Some(id) = &rf.cell else {
        return Measured::Not { why: NOT_MEASURED.into(), by: String::new() };
    };
    let metric = rf.metric.clone().unwrap_or_else(|| exp.headline.clone());
    let by = format!("{id} · {}", names::metric_label(&metric));
    let Some(cell) = find_cell(r, exp, id) else {
        return Measured::Not { why: format!("{NOT_MEASURED} (no such cell)"), by };
    };
    let by = format!("{} · {}", cell.id, names::metric_label(&metric));
    match cell.summary.get(&metric) {
        Some(e) if !names::is_failure(cell.status) => Measured::Figure { text: format::estimate(&metric, e), by },
        Some(e) => {
            Measured::Figure { text: format!("{} ({})", format::estimate(&metric, e), names::status(cell.status)), by }
        }
        None if cell.status == CellStatus::NotMeasured => Measured::Not { why: NOT_MEASURED.into(), by },
        None => Measured::Not { why: format!("{NOT_MEASURED} ({})", names::status(cell.status)), by },
    }
}

/// A reference names its cell by full id, or relative to its experiment (`auth/rust-actix`).
pub fn find_cell<'a>(r: &'a Results, exp: &Experiment, id: &str) -> Option<&'a Cell> {
    r.cell(id).or_else(|| r.cell(&format!("{}/{id}", exp.id)))
}
