//! Nothing callbench makes outlives it. Every namespace is registered while it exists, so a
//! signal handler can remove them all ([`remove_all`]); what a killed run could not remove (its
//! namespaces' mounts: the TUN devices and processes inside die with it) carries the dead run's
//! pid and start time in its name, and the next run removes it ([`remove_leftovers`]).

use nix::mount::{umount2, MntFlags};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where named network namespaces live (iproute2's NETNS_RUN_DIR).
pub const RUN_DIR: &str = "/run/netns";

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Every name callbench gives a namespace starts with this.
pub const PREFIX: &str = "callbench-";

pub fn register(path: &Path) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(path.to_path_buf());
}

pub fn unregister(path: &Path) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != path);
}

/// Removes every namespace this process made and still holds (Ctrl-C, SIGTERM, a fatal error).
/// The forwarder threads end with the process, and their TUN devices with them.
pub fn remove_all() {
    let paths = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for path in paths {
        remove_path(&path);
    }
}

/// Unmounts and deletes a namespace's file (the namespace ends with its last process).
pub fn remove_path(path: &Path) {
    let _ = umount2(path, MntFlags::MNT_DETACH);
    let _ = std::fs::remove_file(path);
}

/// `callbench-<pid>.<start>-…`: the owner's pid and its start time (clock ticks after boot, as
/// /proc/PID/stat gives it), so a pid reused by another process does not keep a leftover alive.
pub fn owner_tag() -> String {
    let pid = std::process::id();
    format!("{pid}.{}", start_time(pid).unwrap_or(0))
}

/// Removes the namespaces of callbench runs that are no longer alive; returns their names.
pub fn remove_leftovers() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(RUN_DIR) else { return vec![] };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(PREFIX) else { continue };
        let owner = rest.split('-').next().unwrap_or("");
        if !owner_alive(owner) {
            remove_path(&entry.path());
            removed.push(name);
        }
    }
    removed
}

fn owner_alive(tag: &str) -> bool {
    let Some((pid, start)) = tag.split_once('.') else { return false };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else { return false };
    start_time(pid) == Some(start)
}

/// Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        assert!(owner_alive(&owner_tag()));
        let pid = std::process::id();
        assert!(!owner_alive(&format!("{pid}.1")), "same pid, other start time");
        assert!(!owner_alive("4194304.5"));
        assert!(!owner_alive("garbage"));
    }
}
