//! Files a reader never sees half-written. Every result, report and data file callbench writes
//! goes through [`write_atomic`]: a crash or Ctrl-C mid-write leaves the previous file whole.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Writes `bytes` to `path` all at once: to a temporary file beside it (same file system, a name
/// unique to this process and call, as threads may write the same file), synced, then renamed
/// over `path`. On failure the temporary file is removed and `path` is left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()));
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

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("callbench-files-{name}-{}", std::process::id()));
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
