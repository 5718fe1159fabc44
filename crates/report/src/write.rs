//! Writes the reports beside results.json. Each file is written to a temporary file in the same
//! folder and renamed over the old one, so a reader never sees half a report.

use callbench_atomic_file::write_atomic;
use callbench_results::model::Results;
use std::path::Path;

pub const MARKDOWN: &str = "report.md";
pub const HTML: &str = "report.html";

/// Writes `report.md` and `report.html` into `dir` (created if missing).
pub fn write_reports(r: &Results, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join(MARKDOWN), crate::markdown::markdown(r).as_bytes())?;
    write_atomic(&dir.join(HTML), crate::html::html(r).as_bytes())
}
