//! The server side's cost, read from /proc: CPU time (user + system) and resident memory of every
//! process in the server's process group (a server may fork workers: php-fpm, nginx, uvicorn).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// CPU time of a process group at one moment, two ways: each process's CPU clock in nanoseconds
/// (every thread's, those that ended included; where the clock cannot be read, the scheduler's
/// nanoseconds of its live threads) and /proc/PID/stat's ticks (10 ms resolution, kept for
/// processes that end between two readings).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuReading {
    pub at: Option<Instant>,
    sched_ns: u64,
    stat_ticks: u64,
}

/// The processes whose process group is `group` (the server's leader pid).
pub fn group_pids(group: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            pid == group || stat_fields(pid).is_some_and(|f| f.get(2).and_then(|g| g.parse().ok()) == Some(group))
        })
        .collect()
}

/// The fields of /proc/PID/stat after the command name: state, ppid, pgrp, ...
pub(crate) fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

pub fn read_cpu(pids: &[i32]) -> CpuReading {
    let mut reading = CpuReading { at: Some(Instant::now()), ..Default::default() };
    for &pid in pids {
        if let Some(f) = stat_fields(pid) {
            // utime and stime are fields 14 and 15 of stat; index 11 and 12 after the name.
            let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            reading.stat_ticks += field(11) + field(12);
        }
        if let Some(ns) = process_clock_ns(pid) {
            reading.sched_ns += ns;
        } else if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let path = task.path().join("schedstat");
                if let Some(ns) =
                    std::fs::read_to_string(path).ok().and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok())
                {
                    reading.sched_ns += ns;
                }
            }
        }
    }
    reading
}

/// The CPU time process `pid` has had, all its threads' including those that ended, in
/// nanoseconds: its process CPU clock (`clock_getcpuclockid`). A server that starts a thread per
/// connection (Python's ThreadingHTTPServer) ends them within a window; summed per live thread
/// from /proc, their time was lost and a window of a few hundred calls read no server CPU.
fn process_clock_ns(pid: i32) -> Option<u64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid writes the clock id it is given, clock_gettime the timespec.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return None;
    }
    Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// CPU time between two readings: the CPU clocks' nanoseconds, unless the tick count says more
/// than two ticks' worth went missing (processes that ended in between).
pub fn cpu_between(a: &CpuReading, b: &CpuReading) -> Duration {
    let tick_ns = 1_000_000_000 / ticks_per_second();
    let sched = b.sched_ns.saturating_sub(a.sched_ns);
    let ticks = b.stat_ticks.saturating_sub(a.stat_ticks) * tick_ns;
    Duration::from_nanos(if ticks > sched + 2 * tick_ns { ticks } else { sched })
}

pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// Resident memory of the processes, in KiB.
pub fn rss_kib(pids: &[i32]) -> u64 {
    pids.iter()
        .filter_map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum()
}

/// How often [`RssSampler`] reads the group's resident memory.
const RSS_EVERY: Duration = Duration::from_millis(50);

/// Samples the group's resident memory every 50 ms on its own thread until dropped; `peak()` is
/// the highest sum seen. Dropping it wakes the thread at once: a repetition does not wait out the
/// rest of a sampling interval after its calls.
pub struct RssSampler {
    peak: Arc<AtomicU64>,
    /// Dropped to stop the thread: its wait ends with the channel.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    pub fn start(pids: Vec<i32>) -> RssSampler {
        RssSampler::every(pids, RSS_EVERY)
    }

    fn every(pids: Vec<i32>, interval: Duration) -> RssSampler {
        let peak = Arc::new(AtomicU64::new(rss_kib(&pids)));
        let (stop, stopped) = mpsc::channel::<()>();
        let p = peak.clone();
        let thread = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                p.fetch_max(rss_kib(&pids), Ordering::Relaxed);
            }
        });
        RssSampler { peak, stop: Some(stop), thread: Some(thread) }
    }

    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU time of the calling thread (its own clock: it counts only while the thread runs).
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) }, 0);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    #[test]
    fn reads_this_process_cpu_and_memory() {
        let me = std::process::id() as i32;
        let (a, started) = (read_cpu(&[me]), Instant::now());
        // Spin until this thread has used 60 ms of CPU, however long a busy machine makes that take
        // (a wall-clock spin may get a fraction of a core when other processes want it too).
        let (mine, deadline) = (thread_cpu(), started + Duration::from_secs(60));
        let mut x = 0u64;
        while thread_cpu() - mine < Duration::from_millis(60) {
            assert!(Instant::now() < deadline, "60 ms of CPU not had in 60 s");
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let (b, wall) = (read_cpu(&[me]), started.elapsed());
        let used = cpu_between(&a, &b);
        // At least what this thread used (less the scheduler's few ms of lag); at most what every
        // core could have given the process (other tests run on other threads) meanwhile.
        let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
        assert!(used >= Duration::from_millis(50) && used <= wall * cores + Duration::from_millis(20), "{used:?} {x}");
        assert!(rss_kib(&[me]) > 0);
    }

    #[test]
    fn a_thread_that_ended_between_two_readings_is_counted() {
        use std::io::{BufRead, BufReader, Write};
        // A process whose one extra thread uses 10 ms of its own CPU and ends, between the two
        // readings: under two ticks, so /proc/PID/stat's ticks could not show it either.
        let script = "import sys, threading, time\n\
            def burn():\n    while time.thread_time() < 0.010: pass\n\
            print('ready', flush=True); sys.stdin.readline()\n\
            t = threading.Thread(target=burn); t.start(); t.join()\n\
            print('done', flush=True); sys.stdin.readline()\n";
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let pid = child.id() as i32;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
        let before = read_cpu(&[pid]);
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin).unwrap();
        assert_eq!(lines.next().unwrap().unwrap(), "done");
        let after = read_cpu(&[pid]);
        writeln!(stdin).unwrap();
        child.wait().unwrap();
        let used = cpu_between(&before, &after);
        assert!(used >= Duration::from_millis(10) && used < Duration::from_secs(5), "{used:?}");
    }

    #[test]
    fn the_memory_sampler_sees_growth_and_stops_when_dropped() {
        let me = std::process::id() as i32;
        // An hour between samples: dropping it must end its wait, or this test hangs.
        let idle = RssSampler::every(vec![me], Duration::from_secs(3600));
        assert!(idle.peak() > 0);
        drop(idle);

        let sampler = RssSampler::every(vec![me], Duration::from_millis(1));
        let before = sampler.peak();
        // 64 MiB touched page by page: resident until dropped.
        let block = vec![1u8; 64 << 20];
        let deadline = Instant::now() + Duration::from_secs(30);
        while sampler.peak() < before + (48 << 10) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(sampler.peak() >= before + (48 << 10), "{} KiB, then {} KiB", before, sampler.peak());
        drop(std::hint::black_box(block));
    }

    #[test]
    fn finds_every_process_of_a_group() {
        use std::os::unix::process::CommandExt;
        // A shell in its own group that forks a second process: both belong to the group.
        let mut child =
            std::process::Command::new("sh").args(["-c", "sleep 5 & sleep 5; wait"]).process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut members = group_pids(group);
        while members.len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            members = group_pids(group);
        }
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = child.wait();
        assert!(members.contains(&group), "{members:?}");
        assert_eq!(members.len(), 3, "sh and its two sleeps: {members:?}");
        assert!(!members.contains(&(std::process::id() as i32)));
    }
}
