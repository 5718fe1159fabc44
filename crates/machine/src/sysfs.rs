//! One-line files of /sys and /proc (a governor, the cpuidle driver, the kernel's release).

/// The file's text, trimmed (None when absent or unreadable).
pub fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}
