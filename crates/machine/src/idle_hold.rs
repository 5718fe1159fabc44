//! While a suite runs, idle CPUs poll instead of sleeping: `/dev/cpu_dma_latency` held at 0 (as
//! cyclictest does by default, and tuned's latency profiles with `force_latency`). One call at a
//! time leaves both pinned CPUs idle between calls, so without it every call also pays for waking
//! a sleeping CPU twice — on a VM an interrupt through the hypervisor, whose cost is the host's
//! load, not the server's (bench/results/methodology-2026-11.md#idle-cpus-kept-awake).
//! The kernel drops the request when the file is closed, so a crash or Ctrl-C releases it too.

use callbench_results::model::IdleHold;
use std::fs::{File, OpenOptions};
use std::io::Write;

const DEVICE: &str = "/dev/cpu_dma_latency";
const DRIVER: &str = "/sys/devices/system/cpu/cpuidle/current_driver";
/// `why_not` when the user asked for idle states: a choice, not something to warn about.
const OPTED_OUT: &str = "--allow-cpu-idle";

/// Holds the request while alive.
pub struct Awake(#[allow(dead_code)] Option<File>);

/// Asks the kernel to keep every CPU out of idle states that take time to leave, unless `allow`
/// (the user's `--allow-cpu-idle`); returns the guard and what happened, for results.json.
pub fn take(allow: bool) -> (Awake, IdleHold) {
    let driver = crate::sysfs::read_trimmed(DRIVER).filter(|s| !s.is_empty());
    if allow {
        let record = IdleHold { held: false, driver, why_not: Some(OPTED_OUT.into()) };
        return (Awake(None), record);
    }
    match request_zero() {
        Ok(file) => (Awake(Some(file)), IdleHold { held: true, driver, why_not: None }),
        Err(e) => (Awake(None), IdleHold { held: false, driver, why_not: Some(format!("{DEVICE}: {e}")) }),
    }
}

/// The request is a native-endian i32 of microseconds, kept for as long as the file is open.
fn request_zero() -> std::io::Result<File> {
    let mut file = OpenOptions::new().write(true).open(DEVICE)?;
    file.write_all(&0i32.to_ne_bytes())?;
    Ok(file)
}

/// A line for stderr and the reports when the hold was wanted but could not be taken.
pub fn warning(hold: &IdleHold) -> Option<String> {
    let why = hold.why_not.as_deref().filter(|w| !hold.held && *w != OPTED_OUT)?;
    Some(format!(
        "idle CPUs could not be kept awake ({why}): one call at a time also measures how fast this machine wakes a sleeping CPU"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The kernel's current request, as the device reports it.
    fn current() -> Option<i32> {
        let mut bytes = [0u8; 4];
        File::open(DEVICE).ok()?.read_exact(&mut bytes).ok()?;
        Some(i32::from_ne_bytes(bytes))
    }

    /// Where the device is writable (root, as CI runs), the request is 0 while held and gone once
    /// the guard drops; elsewhere the record says why it was not held.
    #[test]
    fn holds_cpus_awake_while_the_guard_lives() {
        let writable = OpenOptions::new().write(true).open(DEVICE).is_ok();
        let before = current();
        let (guard, record) = take(false);
        assert_eq!(record.held, writable, "{record:?}");
        if writable {
            assert_eq!(current(), Some(0));
            drop(guard);
            // Unless another run holds one of its own, the kernel is back to what it was.
            if before != Some(0) {
                assert_eq!(current(), before, "the request outlived its guard");
            }
            assert!(warning(&record).is_none());
        } else {
            assert!(record.why_not.as_deref().unwrap().starts_with(DEVICE), "{record:?}");
            assert!(warning(&record).unwrap().contains("could not be kept awake"));
        }
    }

    #[test]
    fn allowing_idle_takes_no_hold_and_warns_of_nothing() {
        let (_guard, record) = take(true);
        assert!(!record.held);
        assert_eq!(record.why_not.as_deref(), Some("--allow-cpu-idle"));
        assert!(warning(&record).is_none());
    }
}
