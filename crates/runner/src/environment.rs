//! The reproducibility record: what ran, where, with what.

use callbench_launcher::repo::Repo;
use callbench_results::model::Environment;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn record(repo: &Repo, command_line: Vec<String>, client_cpus: &[usize], server_cpus: &[usize]) -> Environment {
    let git = |args: &[&str]| {
        // An installed callbench's folder is no checkout: a repository around it is not callbench's.
        if !repo.is_checkout() {
            return None;
        }
        let o = Command::new("git").args(args).current_dir(&repo.root).output().ok()?;
        o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let mut tools = BTreeMap::new();
    for (name, argv) in [("rustc", ["rustc", "--version"]), ("cargo", ["cargo", "--version"])] {
        if let Some(v) = first_line(argv[0], &argv[1..]) {
            tools.insert(name.to_string(), v);
        }
    }
    Environment {
        callbench_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: git(&["rev-parse", "HEAD"]),
        git_dirty: git(&["status", "--porcelain"]).map(|s| !s.is_empty()),
        command_line,
        cpu_model: cpu_model(),
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(online_cpus()),
        kernel: callbench_machine::sysfs::read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        tcp_congestion_control: callbench_machine::sysfs::read_trimmed("/proc/sys/net/ipv4/tcp_congestion_control")
            .unwrap_or_default(),
        io_uring: callbench_engine::net::uring::describe(),
        os: os_name(),
        client_cpus: client_cpus.to_vec(),
        server_cpus: server_cpus.to_vec(),
        tools,
        started_at: utc_now(),
        finished_at: None,
    }
}

fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(program).args(args).output().ok()?;
    String::from_utf8_lossy(&o.stdout).lines().next().map(|l| l.trim().to_string())
}

fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// CPUs online (0-N), whatever this process's affinity is.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as usize
}

fn os_name() -> String {
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.into())
}

/// Now, as RFC 3339 UTC (`2026-11-22T14:03:05Z`).
pub fn utc_now() -> String {
    let (date, time) = utc_parts(SystemTime::now());
    format!("{}-{:02}-{:02}T{:02}:{:02}:{:02}Z", date.0, date.1, date.2, time.0, time.1, time.2)
}

/// Now, for folder names (`20261122-140305`).
pub fn stamp_now() -> String {
    let (date, time) = utc_parts(SystemTime::now());
    format!("{}{:02}{:02}-{:02}{:02}{:02}", date.0, date.1, date.2, time.0, time.1, time.2)
}

fn utc_parts(t: SystemTime) -> ((i64, u32, u32), (u64, u64, u64)) {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    (civil_from_days(days), (rest / 3600, rest % 3600 / 60, rest % 60))
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_from_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
