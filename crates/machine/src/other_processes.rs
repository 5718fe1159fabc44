//! The CPU time of every process that is neither callbench's (nor its children's) nor the server's,
//! by the CPU each last ran on: what other processes took from the pinned CPUs. Each process's time
//! is its own utime + stime (/proc/PID/stat: the scheduler's count of what it ran, in ticks), not
//! /proc/stat's per-CPU ticks: on a tickless kernel a CPU that idles between short bursts of work
//! stops its tick while idle, so its ticks fall mostly in the bursts and its busy ticks can read
//! several times the time anything ran (bench/results/other-processes-*.md). A process
//! that starts and ends between two readings is not seen; one whose threads run on several CPUs
//! counts where its main thread last ran.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A process's CPU time in ticks and the CPU its main thread last ran on.
type Ran = (u64, usize);

/// Every other process's CPU time at one moment.
#[derive(Debug, Clone)]
pub struct OtherProcesses {
    pub at: Instant,
    processes: HashMap<i32, Ran>,
}

/// Reads every process outside `ours` (callbench, the server) and their descendants; None when
/// this /proc does not show the whole machine (in a container the host's other processes are not
/// in it: kthreadd, pid 2, is the sign that it does).
pub fn read(ours: &[i32]) -> Option<OtherProcesses> {
    let kthreadd = std::fs::read_to_string("/proc/2/stat").ok()?;
    if !kthreadd.contains("(kthreadd)") {
        return None;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else { return None };
    let mut parents = HashMap::new();
    let mut ran = HashMap::new();
    for pid in dir.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
        if let Some((parent, r)) = process(pid) {
            parents.insert(pid, parent);
            ran.insert(pid, r);
        }
    }
    ran.retain(|&pid, _| !descends_from(pid, ours, &parents));
    Some(OtherProcesses { at: Instant::now(), processes: ran })
}

/// The CPU time the processes took on `cpus` between `a` and `b`: a process seen in both counts
/// what it ran in between, one seen only in `b` all it ran (it started in between).
pub fn used_between(a: &OtherProcesses, b: &OtherProcesses, cpus: &[usize]) -> Duration {
    let ticks: u64 = b
        .processes
        .iter()
        .filter(|(_, (_, cpu))| cpus.contains(cpu))
        .map(|(pid, (t, _))| t.saturating_sub(a.processes.get(pid).map_or(0, |(before, _)| *before)))
        .sum();
    Duration::from_nanos(ticks * 1_000_000_000 / crate::process_group::ticks_per_second())
}

/// Whether `pid` is one of `ours` or a descendant of one.
fn descends_from(pid: i32, ours: &[i32], parents: &HashMap<i32, i32>) -> bool {
    let mut p = pid;
    // A chain of parents is short; the bound keeps a pid reused mid-read from looping.
    for _ in 0..64 {
        if ours.contains(&p) {
            return true;
        }
        match parents.get(&p) {
            Some(&parent) if parent > 0 => p = parent,
            _ => return false,
        }
    }
    false
}

/// A process's parent, and its utime + stime (ticks) with the CPU its main thread last ran on.
fn process(pid: i32) -> Option<(i32, Ran)> {
    let fields = crate::process_group::stat_fields(pid)?;
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
    // Fields 4 (ppid), 14 and 15 (utime, stime) and 39 (processor): indexes 1, 11, 12 and 36 after the name.
    let parent = fields.get(1)?.parse().ok()?;
    Some((parent, (field(11)? + field(12)?, field(36)? as usize)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_of_ours_are_ours() {
        let parents: HashMap<i32, i32> = [(1, 0), (10, 1), (11, 10), (12, 11), (20, 1)].into_iter().collect();
        assert!(descends_from(12, &[10], &parents));
        assert!(descends_from(10, &[10], &parents));
        assert!(!descends_from(20, &[10], &parents));
        assert!(!descends_from(1, &[10], &parents));
        // A loop in a racing read ends.
        let looped: HashMap<i32, i32> = [(5, 6), (6, 5)].into_iter().collect();
        assert!(!descends_from(5, &[10], &looped));
    }

    #[test]
    fn a_process_counts_what_it_ran_in_between_on_the_cpus_asked() {
        let at = |processes: &[(i32, Ran)]| OtherProcesses {
            at: Instant::now(),
            processes: processes.iter().copied().collect(),
        };
        let a = at(&[(1, (10, 0)), (2, (50, 1))]);
        // 1 ran 5 ticks more on CPU 0; 2 ran 7 more, now on CPU 0; 3 is new, 3 ticks on CPU 1.
        let b = at(&[(1, (15, 0)), (2, (57, 0)), (3, (3, 1))]);
        let tick = Duration::from_nanos(1_000_000_000 / crate::process_group::ticks_per_second());
        assert_eq!(used_between(&a, &b, &[0]), tick * 12);
        assert_eq!(used_between(&a, &b, &[1]), tick * 3);
        assert_eq!(used_between(&a, &b, &[0, 1]), tick * 15);
    }

    #[test]
    fn this_machine_shows_its_processes_but_not_ours() {
        let Some(others) = read(&[std::process::id() as i32]) else {
            // In a container: nothing to check here (the caller falls back to /proc/stat).
            return;
        };
        assert!(others.processes.contains_key(&2), "kthreadd is another process");
        assert!(!others.processes.contains_key(&(std::process::id() as i32)));
    }
}
