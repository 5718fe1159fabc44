//! Which CPUs the client and the servers get, and pinning callbench itself. On a machine with two
//! or more CPUs, client and servers never share one.

use std::fmt;

/// Why CPUs cannot be chosen or pinned to, in kinds a caller can match.
#[derive(Debug)]
pub enum PinError {
    /// A side was given no CPU.
    NoCpu {
        side: &'static str,
    },
    /// A side was given a CPU the machine does not have (its CPUs are 0 to `online` − 1).
    NoSuchCpu {
        side: &'static str,
        cpu: usize,
        online: usize,
    },
    /// The client's and the servers' CPUs share one.
    Overlap {
        client: Vec<usize>,
        server: Vec<usize>,
    },
    /// Text that is not a CPU list, or names none.
    NotAList {
        text: String,
    },
    NamesNone {
        text: String,
    },
    /// A CPU beyond what a `cpu_set_t` holds.
    OutOfRange {
        cpu: usize,
    },
    /// The kernel refused the pinning (or this process's threads could not be listed).
    Refused {
        cpus: Vec<usize>,
        error: std::io::Error,
    },
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinError::NoCpu { side } => write!(f, "the {side} needs at least one CPU"),
            PinError::NoSuchCpu { side, cpu, online } => {
                write!(f, "{side} CPU {cpu} does not exist (this machine has CPUs 0-{})", online.saturating_sub(1))
            }
            PinError::Overlap { client, server } => {
                write!(f, "client CPUs {client:?} and server CPUs {server:?} overlap: they must not share a core")
            }
            PinError::NotAList { text } => write!(f, "'{text}' is not a CPU list (e.g. 0 or 0,1 or 2-3)"),
            PinError::NamesNone { text } => write!(f, "'{text}' names no CPU"),
            PinError::OutOfRange { cpu } => write!(f, "CPU {cpu} is out of range"),
            PinError::Refused { cpus, error } => write!(f, "cannot pin callbench to CPUs {cpus:?}: {error}"),
        }
    }
}

impl std::error::Error for PinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PinError::Refused { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// For callers whose own errors are still text.
impl From<PinError> for String {
    fn from(e: PinError) -> String {
        e.to_string()
    }
}

/// (client, server) CPU sets: the given ones, checked, or the first half for the client and the
/// rest for the servers. One CPU: both share it (and the record says so).
pub fn choose(
    client: Option<Vec<usize>>,
    server: Option<Vec<usize>>,
    online: usize,
) -> Result<(Vec<usize>, Vec<usize>), PinError> {
    let all: Vec<usize> = (0..online).collect();
    let half = (online / 2).max(1);
    let client = client.unwrap_or_else(|| all[..half].to_vec());
    let server = server.unwrap_or_else(|| if online > 1 { all[half..].to_vec() } else { all.clone() });
    for (side, cpus) in [("client", &client), ("server", &server)] {
        check(side, cpus, online)?;
    }
    if online > 1 && client.iter().any(|c| server.contains(c)) {
        return Err(PinError::Overlap { client, server });
    }
    Ok((client, server))
}

/// One side's CPUs: at least one, each on this machine.
pub fn check(side: &'static str, cpus: &[usize], online: usize) -> Result<(), PinError> {
    if cpus.is_empty() {
        return Err(PinError::NoCpu { side });
    }
    match cpus.iter().find(|c| **c >= online) {
        Some(&cpu) => Err(PinError::NoSuchCpu { side, cpu, online }),
        None => Ok(()),
    }
}

/// Parses `0`, `0,1`, `2-3`.
pub fn parse_list(text: &str) -> Result<Vec<usize>, PinError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || PinError::NotAList { text: text.to_string() };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err(PinError::NamesNone { text: text.to_string() });
    }
    Ok(out)
}

/// Pins every thread of this process (threads made later inherit it from their creator).
pub fn pin_self(cpus: &[usize]) -> Result<(), PinError> {
    let refused = |error| PinError::Refused { cpus: cpus.to_vec(), error };
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= 8 * std::mem::size_of::<libc::cpu_set_t>()) {
        return Err(PinError::OutOfRange { cpu });
    }
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays in bounds for the CPUs checked above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    let tasks = std::fs::read_dir("/proc/self/task").map_err(refused)?;
    for tid in tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse::<i32>().ok()) {
        // SAFETY: plain syscall on a thread of this process.
        if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
            return Err(refused(std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Pins the calling thread alone to `cpu`.
pub fn pin_thread(cpu: usize) -> Result<(), PinError> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET is bounded by the set's size below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(PinError::OutOfRange { cpu });
    }
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pins the calling thread only.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(PinError::Refused { cpus: vec![cpu], error: std::io::Error::last_os_error() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_machine_in_two_by_default() {
        assert_eq!(choose(None, None, 2).unwrap(), (vec![0], vec![1]));
        assert_eq!(choose(None, None, 8).unwrap(), (vec![0, 1, 2, 3], vec![4, 5, 6, 7]));
        assert_eq!(choose(None, None, 1).unwrap(), (vec![0], vec![0]));
    }

    #[test]
    fn refuses_overlap_and_missing_cpus() {
        let overlap = choose(Some(vec![0]), Some(vec![0, 1]), 2).unwrap_err();
        assert!(matches!(overlap, PinError::Overlap { .. }) && overlap.to_string().contains("overlap"));
        let missing = choose(Some(vec![0]), Some(vec![5]), 2).unwrap_err();
        assert!(matches!(missing, PinError::NoSuchCpu { side: "server", cpu: 5, online: 2 }), "{missing}");
        assert_eq!(missing.to_string(), "server CPU 5 does not exist (this machine has CPUs 0-1)");
        assert!(matches!(choose(Some(vec![]), None, 2), Err(PinError::NoCpu { side: "client" })));
    }

    #[test]
    fn parses_cpu_lists() {
        assert_eq!(parse_list("0").unwrap(), vec![0]);
        assert_eq!(parse_list("0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(matches!(parse_list("x"), Err(PinError::NotAList { .. })));
        assert!(matches!(parse_list("3-1"), Err(PinError::NotAList { .. })));
        assert!(matches!(parse_list(" , "), Err(PinError::NamesNone { .. })));
        assert!(matches!(pin_thread(1 << 20), Err(PinError::OutOfRange { cpu: 1048576 })));
    }
}
