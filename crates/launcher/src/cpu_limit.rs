//! A CPU limit for a server, as a burstable cloud instance imposes one: a cgroup of its own with a
//! CFS quota (cgroup v2's `cpu.max`, or the v1 cpu controller's `cpu.cfs_quota_us`), and optionally
//! a burst (`cpu.max.burst`, v1's `cpu.cfs_burst_us`): quota left unused in earlier periods that a
//! later period may spend, at most one period's quota (the kernel refuses more). The server enters
//! it between fork and exec, so every process it starts stays inside. Needs root.

use crate::error::LaunchError;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The scheduler period the quota is a share of: the kernel's default, 100 ms.
const PERIOD_US: u64 = 100_000;

/// A cgroup with a CPU quota, removed when dropped (after the processes in it have ended).
#[derive(Debug)]
pub struct CpuLimit {
    dir: PathBuf,
    v2: bool,
    /// CPUs' worth of time per period the group may use, e.g. 0.2.
    pub cpus: f64,
    /// Unused quota a period may carry into later ones, in µs (0: none).
    pub burst_us: u64,
    /// `cgroup.procs` of the group, for a child to write itself into before exec.
    pub procs: CString,
}

/// How often the quota held the group back, from its `cpu.stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttling {
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled_us: u64,
}

/// The file of a group's burst, v2 and v1.
fn burst_file(v2: bool) -> &'static str {
    if v2 {
        "cpu.max.burst"
    } else {
        "cpu.cfs_burst_us"
    }
}

/// `20%` or `0.2` (a fifth of one CPU), `1.5` (one and a half CPUs): more than 0, at most 1024 CPUs.
pub fn parse(text: &str) -> Result<f64, LaunchError> {
    parse_share(text).map_err(LaunchError::BadLimit)
}

fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("a CPU limit is a share of one CPU, like 20% or 0.2, not '{text}'"))?;
    if !(value.is_finite() && value > 0.0 && value <= 1024.0) {
        return Err(format!("a CPU limit is more than 0 and at most 1024 CPUs, not '{text}'"));
    }
    if quota_us(value) < 1000 {
        return Err(format!("a CPU limit of '{text}' is under 1% of a CPU, the least the kernel's quota takes"));
    }
    Ok(value)
}

/// `20ms`, `5000us`, `0`: a burst for a limit of `cpus`, in µs, at most its quota per period.
pub fn parse_burst(text: &str, cpus: f64) -> Result<u64, LaunchError> {
    parse_burst_us(text, cpus).map_err(LaunchError::BadLimit)
}

fn parse_burst_us(text: &str, cpus: f64) -> Result<u64, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1.0)
    } else if t == "0" {
        ("0", 1.0)
    } else {
        return Err(format!("a CPU burst is a time like 20ms or 5000us, not '{text}'"));
    };
    let value = number.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    let us = value
        .map(|v| (v * scale).round() as u64)
        .ok_or_else(|| format!("a CPU burst is a time like 20ms, not '{text}'"))?;
    if us > quota_us(cpus) {
        return Err(format!(
            "a CPU burst of '{text}' is more than the limit's quota of {} µs a period, which the kernel refuses",
            quota_us(cpus)
        ));
    }
    Ok(us)
}

/// The quota in µs per [`PERIOD_US`] for `cpus`.
fn quota_us(cpus: f64) -> u64 {
    (cpus * PERIOD_US as f64).round() as u64
}

impl CpuLimit {
    /// A new cgroup holding its processes to `cpus` CPUs' worth of time (see [`parse`]), and letting
    /// a period spend up to `burst_us` of quota left unused before (0: none; at most the quota).
    pub fn create(cpus: f64, burst_us: u64) -> Result<CpuLimit, LaunchError> {
        CpuLimit::make(cpus, burst_us).map_err(LaunchError::CannotLimit)
    }

    fn make(cpus: f64, burst_us: u64) -> Result<CpuLimit, String> {
        let name = format!("callbench-{}-{}", std::process::id(), next_serial());
        let quota = quota_us(cpus);
        let (dir, v2) = if cpu_controller_v2(Path::new(V2_ROOT)) {
            // The root's children get the cpu controller only when the root hands it down.
            HandedDown::take(Path::new(V2_ROOT));
            (Path::new(V2_ROOT).join(&name), true)
        } else if let Some(v1) = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
            .iter()
            .map(Path::new)
            .find(|p| p.join("cpu.cfs_quota_us").is_file())
        {
            (v1.join(&name), false)
        } else {
            return Err("a CPU limit needs the cgroup cpu controller (cgroup v2's cpu.max or v1's cpu.cfs_quota_us), \
                        which this machine does not mount"
                .into());
        };
        std::fs::create_dir(&dir).map_err(|e| {
            if v2 {
                HandedDown::release(Path::new(V2_ROOT));
            }
            format!("cannot create the cgroup {} for a CPU limit: {e} (a CPU limit needs root)", dir.display())
        })?;
        let limit = CpuLimit {
            procs: CString::new(dir.join("cgroup.procs").display().to_string()).map_err(|e| e.to_string())?,
            dir,
            v2,
            cpus,
            burst_us,
        };
        let written = if v2 {
            limit.write("cpu.max", &format!("{quota} {PERIOD_US}"))
        } else {
            limit
                .write("cpu.cfs_period_us", &PERIOD_US.to_string())
                .and_then(|_| limit.write("cpu.cfs_quota_us", &quota.to_string()))
        };
        written?;
        if burst_us > 0 {
            limit.set_burst(quota)?;
        }
        Ok(limit)
    }

    /// Writes the burst, after saying why when this kernel has none or refuses it.
    fn set_burst(&self, quota: u64) -> Result<(), String> {
        let file = burst_file(self.v2);
        if !self.dir.join(file).is_file() {
            return Err(format!(
                "this kernel has no {file} in {} (a CPU burst needs Linux 5.14 or later with CFS bandwidth)",
                self.dir.display()
            ));
        }
        if self.burst_us > quota {
            return Err(format!(
                "a CPU burst of {} µs is more than the quota of {quota} µs a period, which the kernel refuses",
                self.burst_us
            ));
        }
        self.write(file, &self.burst_us.to_string())
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(|e| format!("cannot write '{value}' to {}: {e}", path.display()))
    }

    /// The group's folder, e.g. /sys/fs/cgroup/callbench-123-0.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its `cpu.stat` so far; None when it cannot be read.
    pub fn throttling(&self) -> Option<Throttling> {
        let text = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        parse_stat(&text, self.v2)
    }
}

impl Drop for CpuLimit {
    fn drop(&mut self) {
        // An ended process leaves its cgroup as it is reaped; a group still holding one stays
        // (the kernel refuses to remove it) rather than being waited for.
        let _ = std::fs::remove_dir(&self.dir);
        if self.v2 {
            HandedDown::release(Path::new(V2_ROOT));
        }
    }
}

/// Where cgroup v2 is mounted.
const V2_ROOT: &str = "/sys/fs/cgroup";

/// Whether callbench handed the cpu controller down from the root cgroup (`+cpu` in its
/// `cgroup.subtree_control`, which the machine did not have), and how many limits use it: the last
/// one to go takes it back (`-cpu`), so the host's cgroup set-up is as it was.
struct HandedDown {
    limits: usize,
    by_us: bool,
}

static HANDED_DOWN: std::sync::Mutex<HandedDown> = std::sync::Mutex::new(HandedDown { limits: 0, by_us: false });

impl HandedDown {
    /// One more limit under `root`: hands the controller down if it is not yet, and says so.
    fn take(root: &Path) {
        let mut state = HANDED_DOWN.lock().unwrap_or_else(|p| p.into_inner());
        if state.limits == 0 && !controls_cpu(root) {
            let file = root.join("cgroup.subtree_control");
            state.by_us = std::fs::write(&file, "+cpu").is_ok();
            if state.by_us {
                eprintln!("callbench: +cpu written to {} for the CPU limit; taken back at the end", file.display());
            }
        }
        state.limits += 1;
    }

    /// One limit fewer under `root`: the last takes the controller back if callbench handed it down.
    fn release(root: &Path) {
        let mut state = HANDED_DOWN.lock().unwrap_or_else(|p| p.into_inner());
        state.limits = state.limits.saturating_sub(1);
        if state.limits == 0 && std::mem::take(&mut state.by_us) {
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "-cpu");
        }
    }
}

/// Whether the root's children already get the cpu controller.
fn controls_cpu(root: &Path) -> bool {
    std::fs::read_to_string(root.join("cgroup.subtree_control")).is_ok_and(|c| c.split_whitespace().any(|w| w == "cpu"))
}

/// Writes the calling process into the group whose `cgroup.procs` is `procs` (0 means "me" in v1
/// and v2 alike). Only async-signal-safe calls: for `pre_exec`.
pub fn enter(procs: &CString) -> std::io::Result<()> {
    // SAFETY: open, write and close with a valid C string and a local buffer.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, b"0\n".as_ptr().cast(), 2);
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if written < 0 {
            return Err(error);
        }
    }
    Ok(())
}

fn cpu_controller_v2(root: &Path) -> bool {
    std::fs::read_to_string(root.join("cgroup.controllers")).is_ok_and(|c| c.split_whitespace().any(|w| w == "cpu"))
}

fn next_serial() -> u64 {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// v2: `nr_periods`, `nr_throttled`, `throttled_usec`; v1: the same counts and `throttled_time` in ns.
fn parse_stat(text: &str, v2: bool) -> Option<Throttling> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(key).and_then(|v| v.strip_prefix(' ')).and_then(|v| v.trim().parse::<u64>().ok())
        })
    };
    Some(Throttling {
        periods: field("nr_periods")?,
        throttled_periods: field("nr_throttled")?,
        throttled_us: if v2 { field("throttled_usec")? } else { field("throttled_time")? / 1000 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// A stand-in for the v2 root: a folder whose `cgroup.subtree_control` is a plain file holding
    /// what was last written (the kernel's would hold the controllers; the writes are what counts).
    fn fake_root(controls: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("callbench-cgroup-root-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("cgroup.subtree_control"), controls).unwrap();
        root
    }

    #[test]
    fn the_cpu_controller_handed_down_is_taken_back_by_the_last_limit_only() {
        let root = fake_root("memory pids");
        let control = || std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap();
        HandedDown::take(&root);
        assert_eq!(control(), "+cpu");
        std::fs::write(root.join("cgroup.subtree_control"), "cpu memory pids").unwrap(); // as the kernel shows it
        HandedDown::take(&root);
        HandedDown::release(&root);
        assert_eq!(control(), "cpu memory pids", "another limit still uses it");
        HandedDown::release(&root);
        assert_eq!(control(), "-cpu");
        // A machine that hands it down already is left as it is.
        std::fs::write(root.join("cgroup.subtree_control"), "cpu memory").unwrap();
        HandedDown::take(&root);
        HandedDown::release(&root);
        assert_eq!(control(), "cpu memory");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_limit_is_a_share_of_one_cpu() {
        assert_eq!(parse("20%"), Ok(0.2));
        assert_eq!(parse("0.2"), Ok(0.2));
        assert_eq!(parse(" 150% "), Ok(1.5));
        assert_eq!(quota_us(0.2), 20_000);
        for bad in ["", "x", "0", "-1", "0%", "0.001", "2000", "inf", "NaN"] {
            assert!(matches!(parse(bad), Err(LaunchError::BadLimit(_))), "{bad}");
        }
    }

    #[test]
    fn a_burst_is_microseconds_at_most_one_quota() {
        assert_eq!(parse_burst("20ms", 0.2), Ok(20_000));
        assert_eq!(parse_burst("0", 0.2), Ok(0));
        assert_eq!(parse_burst("5000us", 0.2), Ok(5_000));
        for bad in ["x", "21ms", "-1ms", "1s"] {
            assert!(matches!(parse_burst(bad, 0.2), Err(LaunchError::BadLimit(_))), "{bad}");
        }
    }

    #[test]
    fn cpu_stat_reads_both_versions() {
        let v2 = "usage_usec 100\nnr_periods 50\nnr_throttled 7\nthrottled_usec 3500\n";
        assert_eq!(parse_stat(v2, true), Some(Throttling { periods: 50, throttled_periods: 7, throttled_us: 3500 }));
        let v1 = "nr_periods 50\nnr_throttled 7\nthrottled_time 3500000\n";
        assert_eq!(parse_stat(v1, false), Some(Throttling { periods: 50, throttled_periods: 7, throttled_us: 3500 }));
        assert_eq!(parse_stat("nr_periods 1\n", true), None);
    }

    /// As root on a machine with the cpu controller: a child that enters the group is in it, and
    /// the group's quota is the one asked for. Elsewhere `create` must say why it cannot.
    #[test]
    fn a_child_enters_the_limited_group() {
        let limit = match CpuLimit::create(0.25, 0) {
            Ok(limit) => limit,
            Err(e) => {
                // SAFETY: geteuid has no preconditions.
                assert_ne!(unsafe { libc::geteuid() }, 0, "root could not make a CPU limit: {e}");
                let LaunchError::CannotLimit(why) = &e else { panic!("{e:?}") };
                assert!(why.contains("root") || why.contains("controller"), "{e}");
                return;
            }
        };
        let quota = if limit.v2 {
            std::fs::read_to_string(limit.dir().join("cpu.max")).unwrap()
        } else {
            std::fs::read_to_string(limit.dir().join("cpu.cfs_quota_us")).unwrap()
        };
        assert!(quota.starts_with("25000"), "{quota}");
        let procs = limit.procs.clone();
        let mut command = std::process::Command::new("cat");
        command.arg("/proc/self/cgroup");
        // SAFETY: enter makes only async-signal-safe calls.
        unsafe {
            command.pre_exec(move || enter(&procs));
        }
        let out = command.output().unwrap();
        assert!(out.status.success());
        let name = limit.dir().file_name().unwrap().to_str().unwrap().to_string();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.lines().any(|l| l.ends_with(&format!("/{name}"))), "{name} not in:\n{text}");
        assert!(limit.throttling().is_some());
    }

    /// As root: a burst is written to the group's burst file, or `create` says the kernel has none.
    #[test]
    fn a_burst_is_written_or_its_absence_said() {
        match CpuLimit::create(0.25, 10_000) {
            Ok(limit) => {
                let burst = std::fs::read_to_string(limit.dir().join(burst_file(limit.v2))).unwrap();
                assert_eq!(burst.trim(), "10000");
            }
            Err(e) => {
                let why = e.to_string();
                assert!(why.contains("no cpu.") || why.contains("root") || why.contains("controller"), "{e}")
            }
        }
    }
}
