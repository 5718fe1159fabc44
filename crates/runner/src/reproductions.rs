//! The committed reproductions (`reproductions/<name>/results.json`): how long each run took,
//! from the `environment` keys every results.json records (`started_at`, `finished_at`, both
//! UTC ISO 8601 with a `Z`), and which commit made it (`git_commit`, `git_dirty`). The suite
//! catalogue states the measured time of a suite that has one, and the tests hold the seed table's
//! stated times and every run's provenance to these records.

use crate::RunError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the reproductions are, relative to the repository.
pub const DIR: &str = "reproductions";

/// The results file of the committed reproduction called `name`, if there is one.
pub fn results_file(repo_root: &Path, name: &str) -> Option<PathBuf> {
    let path = repo_root.join(DIR).join(name).join("results.json");
    path.is_file().then_some(path)
}

/// Every committed reproduction's name (its folder under `reproductions/`), sorted.
pub fn names(repo_root: &Path) -> Result<Vec<String>, RunError> {
    let dir = repo_root.join(DIR);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| RunError::Files(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("results.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// The results file as JSON; the error names the file.
pub fn read(path: &Path) -> Result<Value, RunError> {
    let error = |e: &dyn std::fmt::Display| RunError::Files(format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| error(&e))?;
    serde_json::from_str(&text).map_err(|e| error(&e))
}

/// The run's wall time in seconds (`environment.finished_at` − `environment.started_at`). A
/// results.json made before the scripts recorded these keys gets a one-line reason instead.
pub fn wall_seconds(results: &Value) -> Result<f64, RunError> {
    let stamp = |key: &str| -> Result<i64, String> {
        let text = results
            .pointer(&format!("/environment/{key}"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                format!("it records no environment.{key} (made before its runner recorded one: run it again)")
            })?;
        unix_seconds(text).ok_or_else(|| format!("environment.{key} {text:?} is not YYYY-MM-DDTHH:MM:SSZ"))
    };
    let (start, end) = (stamp("started_at").map_err(RunError::Files)?, stamp("finished_at").map_err(RunError::Files)?);
    if end < start {
        return Err(RunError::Files(format!("environment.finished_at is before started_at ({} s)", end - start)));
    }
    Ok((end - start) as f64)
}

/// Seconds since 1970 of a UTC time written `YYYY-MM-DDTHH:MM:SSZ`, as results.json records its run.
pub fn unix_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let ok = b.len() == 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    if !ok || b[19] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| text.get(r).and_then(|s| s.parse::<i64>().ok());
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The commit a results.json names and whether its tree was clean, or why it cannot say.
pub fn provenance(results: &Value) -> Result<(String, bool), RunError> {
    let missing = |what: &str| RunError::Files(what.to_string());
    let commit = results
        .pointer("/environment/git_commit")
        .and_then(Value::as_str)
        .filter(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| missing("it records no environment.git_commit of 40 hex digits"))?;
    let dirty = results
        .pointer("/environment/git_dirty")
        .and_then(Value::as_bool)
        .ok_or_else(|| missing("it records no environment.git_dirty"))?;
    Ok((commit.to_string(), dirty))
}

/// The committed list of reproductions not yet run again from a clean commit.
pub const NOT_RERUN: &str = "reproductions/not-rerun.toml";

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NotRerun {
    /// Empty once every reproduction was run again.
    #[serde(default)]
    reproduction: Vec<Listed>,
}

/// One reproduction of [`NOT_RERUN`]: its name and why it is there.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    pub name: String,
    pub why: String,
}

/// The reproductions [`NOT_RERUN`] lists.
pub fn not_rerun(repo_root: &Path) -> Result<Vec<Listed>, RunError> {
    let error = |e: &dyn std::fmt::Display| RunError::Files(format!("{NOT_RERUN}: {e}"));
    let text = std::fs::read_to_string(repo_root.join(NOT_RERUN)).map_err(|e| error(&e))?;
    let list: NotRerun = toml::from_str(&text).map_err(|e| error(&e))?;
    Ok(list.reproduction)
}

#[cfg(test)]
mod tests;
