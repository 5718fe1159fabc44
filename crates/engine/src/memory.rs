//! The load process's own memory: what a misbehaving server can make a client hold.

/// The peak resident memory of this process so far (VmHWM, KiB), where /proc has it. Unlike
/// getrusage's maxrss it starts at this program's exec: not the memory of whatever forked it.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| line.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn grows_with_what_this_process_holds() {
        // Tests run side by side in this process and may have set the peak already: hold more
        // than the whole peak so far, so this vector alone must raise it.
        let before = super::peak_rss_kib().expect("Linux has VmHWM");
        let held = vec![1u8; ((before + 64 * 1024) * 1024) as usize];
        let after = super::peak_rss_kib().unwrap();
        assert!(after >= before + 64 * 1024, "{before} -> {after} KiB");
        std::hint::black_box(held);
    }
}
