//! Writes the reports beside results.json. Each file is written to a temporary file in the same
//! folder and renamed over the old one, so a reader never sees half a report.

use crate::model::Results;
use std::io::Write;
use std::path::Path;

pub const MARKDOWN: &str = "report.md";
pub const HTML: &str = "report.html";

/// Writes `report.md` and `report.html` into `dir` (created if missing).
pub fn write_reports(r: &Results, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join(MARKDOWN), crate::markdown::markdown(r).as_bytes())?;
    write_atomic(&dir.join(HTML), crate::html::html(r).as_bytes())
}

/// Writes `bytes` to `path` all at once: temp file in the same folder (same file system), synced,
/// then renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("report");
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("callbench-write-{}", std::process::id()));
        let path = dir.join("x.md");
        std::fs::create_dir_all(&dir).unwrap();
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["x.md"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
