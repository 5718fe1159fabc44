//! A scratch directory of the process's own: made fresh under a name no one can guess (never one
//! that was there, so never one another user made first, with symlinks planted inside), private
//! (mode 0700), and removed with what is in it when dropped. What callbench writes as root for the
//! commands it runs (a certificate, a resolver file, a coordinator's results) goes only there.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many names are tried before giving up (each is new: a clash means someone made it first).
const ATTEMPTS: usize = 64;

#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A new directory `<prefix>-<pid>-<random>` in the temp directory (`$TMPDIR`, else /tmp).
    pub fn new(prefix: &str) -> io::Result<ScratchDir> {
        Self::new_in(&std::env::temp_dir(), prefix)
    }

    /// A new directory `<prefix>-<pid>-<random>` in `parent`; an error if none could be made.
    pub fn new_in(parent: &Path, prefix: &str) -> io::Result<ScratchDir> {
        for _ in 0..ATTEMPTS {
            let path = parent.join(format!("{prefix}-{}-{:016x}", std::process::id(), unguessable()));
            // mkdir fails on anything already at the path (a directory, a file, a symlink): fresh or nothing.
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("cannot create a directory {prefix}-* in {}: every name tried was taken", parent.display()),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file's path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // remove_dir_all removes a symlink inside, never what it points to.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// 64 bits no other process can predict: the kernel's random bytes, else the clock and a counter
/// mixed (a name taken first is skipped all the same, so this only makes a clash unlikely).
fn unguessable() -> u64 {
    let mut bytes = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes)).is_ok() {
        return u64::from_ne_bytes(bytes);
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    crate::rng::Rng::new(now.as_nanos() as u64 ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn each_is_new_private_and_gone_when_dropped() {
        let (a, b) =
            (ScratchDir::new("callbench-scratch-test").unwrap(), ScratchDir::new("callbench-scratch-test").unwrap());
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        std::fs::write(a.join("f"), "x").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }

    #[test]
    fn a_symlink_inside_is_removed_not_followed() {
        let outside = ScratchDir::new("callbench-scratch-outside").unwrap();
        let kept = outside.join("kept.txt");
        std::fs::write(&kept, "mine").unwrap();
        let scratch = ScratchDir::new("callbench-scratch-test").unwrap();
        std::os::unix::fs::symlink(outside.path(), scratch.join("link")).unwrap();
        drop(scratch);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
    }

    #[test]
    fn a_parent_that_is_not_there_is_an_error_that_names_it() {
        let e = ScratchDir::new_in(Path::new("/nonexistent-callbench-parent"), "x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-callbench-parent"), "{e}");
    }
}
