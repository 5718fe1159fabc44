//! Nothing callbench makes outlives it. Every namespace is registered while it exists, so a
//! signal handler can remove them all ([`remove_all`]); what a killed run could not remove (its
//! namespaces' mounts: the TUN devices and processes inside die with it) carries the dead run's
//! pid and start time in its name, and the next run removes it ([`remove_leftovers`]). A name
//! not in that exact form is someone else's, however it starts, and is left alone.

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
    let _ = crate::sys::unmount_lazily(path);
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
        let Ok(name) = entry.file_name().into_string() else { continue };
        let Some((pid, start)) = owner_of(&name) else { continue };
        if start_time(pid) != Some(start) {
            remove_path(&entry.path());
            removed.push(name);
        }
    }
    removed
}

/// The owner (pid, start time) of a name callbench made: `callbench-<pid>.<start>-<n>-<role>`,
/// as `link::run_base` and its callers build it. None for any other name.
fn owner_of(name: &str) -> Option<(u32, u64)> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (tag, rest) = name.strip_prefix(PREFIX)?.split_once('-')?;
    let (pid, start) = tag.split_once('.')?;
    let (n, role) = rest.split_once('-')?;
    if !(digits(pid) && digits(start) && digits(n)) || role.is_empty() {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
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

    /// Whether the owner of `name` is alive, for a name of ours.
    fn owner_alive(name: &str) -> bool {
        let (pid, start) = owner_of(name).expect("a name of ours");
        start_time(pid) == Some(start)
    }

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        assert!(owner_alive(&format!("{PREFIX}{}-0-client", owner_tag())));
        let pid = std::process::id();
        assert!(!owner_alive(&format!("{PREFIX}{pid}.1-0-client")), "same pid, other start time");
        assert!(!owner_alive("callbench-4194304.5-3-lab"));
    }

    #[test]
    fn only_names_in_the_full_owner_form_are_ours() {
        assert_eq!(owner_of("callbench-123.456-0-client"), Some((123, 456)));
        assert_eq!(owner_of("callbench-123.456-12-db-1"), Some((123, 456)), "a lab member's name");
        assert_eq!(owner_of(&format!("{PREFIX}{}-0-server", owner_tag())).map(|o| o.0), Some(std::process::id()));
        for theirs in [
            "callbench-x",
            "callbench-",
            "callbench-123.456",
            "callbench-123.456-0",
            "callbench-123.456-0-",
            "callbench-123.456-x-client",
            "callbench-123-0-client",
            "callbench-.456-0-client",
            "callbench-+123.456-0-client",
            "callbench-123.4x6-0-client",
            "callbench-99999999999.1-0-client",
            "other-123.456-0-client",
            "Callbench-123.456-0-client",
        ] {
            assert_eq!(owner_of(theirs), None, "{theirs}");
        }
    }
}
