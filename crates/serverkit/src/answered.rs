//! The server's own count of the calls it answered, for callbench to set beside a load tool's
//! claim. When `CALLBENCH_ANSWERED_FILE` names a file, the server maps its first 8 bytes (shared)
//! and adds one per answer; callbench reads the file before and after a run (a plain read sees the
//! mapped page). Unset: nothing is mapped and counting is a branch on a value read once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable naming the count's file.
pub const ENV: &str = "CALLBENCH_ANSWERED_FILE";

static COUNTER: OnceLock<Option<&'static AtomicU64>> = OnceLock::new();

/// Maps the count's file if the environment names one; exits with a one-line message if it
/// cannot. Call once at start (the first [`count`] does it otherwise).
pub fn init() {
    COUNTER.get_or_init(|| std::env::var_os(ENV).map(|path| map(std::path::Path::new(&path))));
}

/// One call answered.
#[inline]
pub fn count() {
    init();
    if let Some(Some(counter)) = COUNTER.get() {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

fn map(path: &std::path::Path) -> &'static AtomicU64 {
    use std::os::fd::AsRawFd;
    fn fail(path: &std::path::Path, what: &str, e: std::io::Error) -> ! {
        crate::fail(format!("{ENV}={}: cannot {what}: {e}", path.display()))
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap_or_else(|e| fail(path, "open it", e));
    file.set_len(8).unwrap_or_else(|e| fail(path, "size it", e));
    // SAFETY: a fresh shared mapping of 8 bytes of a file just sized to 8; it is never unmapped
    // (the mapping outlives the descriptor), so the reference is valid for the process's life,
    // and an 8-byte page-aligned location is aligned for AtomicU64.
    unsafe {
        let ptr = libc::mmap(
            std::ptr::null_mut(),
            8,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        if ptr == libc::MAP_FAILED {
            fail(path, "map it", std::io::Error::last_os_error());
        }
        &*(ptr as *const AtomicU64)
    }
}

/// Reads a count file (callbench's side): None when the server never made it (it keeps no count).
pub fn read(path: &std::path::Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    Some(u64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_count_is_seen_by_a_plain_read() {
        let path = std::env::temp_dir().join(format!("callbench-answered-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        assert_eq!(read(&path), None, "no file: no count");
        let counter = map(&path);
        for _ in 0..5 {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        assert_eq!(read(&path), Some(5));
        std::fs::remove_file(&path).unwrap();
    }
}
