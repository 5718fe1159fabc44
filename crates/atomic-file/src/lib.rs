//! Files a reader never sees half-written. Every result, report and data file callbench writes
//! goes through [`write_atomic`]: a crash or Ctrl-C mid-write leaves the previous file whole. The
//! temporary file beside it is always one of ours, created new: a file a user keeps beside an
//! output (`report.json.partial`, or any other name) is never opened, overwritten or removed.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` all at once: to a temporary file of ours beside it (same file
/// system), synced, then renamed over `path`. On failure the temporary file is removed and `path`
/// is left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (tmp, mut file) = create_temporary(path)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Fails now if `write_atomic(path, …)` would fail to create its temporary file (a directory that
/// is missing or not writable): creates one of ours beside `path`, and removes it.
pub fn probe_writable(path: &Path) -> std::io::Result<()> {
    let (tmp, _file) = create_temporary(path)?;
    std::fs::remove_file(tmp)
}

/// A new, empty file beside `path`, `.NAME.PID.RANDOM.partial`, created exclusively (`O_EXCL`):
/// a name that is taken is left alone and another one drawn.
fn create_temporary(path: &Path) -> std::io::Result<(PathBuf, File)> {
    let name = path.file_name().unwrap_or_default();
    let mut taken = None;
    for _ in 0..16 {
        let mut tmp = OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".{}.{:016x}.partial", std::process::id(), random()));
        let tmp = path.with_file_name(tmp);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => taken = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(taken.expect("sixteen names drawn"))
}

/// A number unlike any other this process draws, nor another process likely: std's random hash
/// keys (drawn once per thread from the OS), over a count.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("callbench-atomic-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect()
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = scratch("replace");
        let path = dir.join("x.md");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(names(&dir), ["x.md"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("fail");
        let path = dir.join("x.json");
        write_atomic(&path, b"old").unwrap();
        // A directory where the file should go: the rename over it fails.
        let blocked = dir.join("sub");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        assert!(write_atomic(&blocked, b"new").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        let mut left = names(&dir);
        left.sort();
        assert_eq!(left, ["sub", "x.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_beside_the_output_are_never_touched() {
        let dir = scratch("beside");
        let path = dir.join("keep.json");
        let pid = std::process::id();
        let theirs =
            ["keep.json.partial".to_string(), ".keep.json.tmp-1-0".into(), format!(".keep.json.{pid}.x.partial")];
        for name in &theirs {
            std::fs::write(dir.join(name), name).unwrap();
        }
        probe_writable(&path).unwrap();
        write_atomic(&path, b"result").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "result");
        for name in &theirs {
            assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), *name);
        }
        assert_eq!(names(&dir).len(), theirs.len() + 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_that_cannot_be_written_fails_the_probe() {
        let dir = scratch("missing");
        assert!(probe_writable(&dir.join("no/such/dir/x.json")).is_err());
        probe_writable(&dir.join("x.json")).unwrap();
        assert!(names(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_writing_one_file_each_leave_it_whole() {
        let dir = scratch("threads");
        let path = dir.join("users.json");
        std::thread::scope(|s| {
            for i in 0..8u8 {
                let path = &path;
                s.spawn(move || write_atomic(path, &[b'a' + i; 4096]).unwrap());
            }
        });
        let text = std::fs::read(&path).unwrap();
        assert!(text.len() == 4096 && text.iter().all(|&b| b == text[0]));
        assert_eq!(names(&dir), ["users.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
