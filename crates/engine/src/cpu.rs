//! CPU time used by this process (user + system, every thread): the client's cost of the calls.

use std::time::Duration;

pub fn process_cpu() -> Duration {
    // SAFETY: getrusage only writes into the struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    #[test]
    fn grows_with_work() {
        let before = super::process_cpu();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(super::process_cpu() > before, "{x}");
    }
}
