//! callbench's reports, rendered from a `results.json` (its model and statistics are in
//! `callbench-results`): Markdown, self-contained HTML with SVG charts, comparisons of two runs.

pub mod compare;
pub mod doc;
pub mod escape;
pub mod html;
pub mod markdown;
pub mod names;
pub mod round_trips;
pub mod summary;
pub mod svg;
#[cfg(test)]
mod test_cell;
pub mod write;
