//! Which CPUs the client and the servers get, and pinning callbench itself. On a machine with two
//! or more CPUs, client and servers never share one.

/// (client, server) CPU sets: the given ones, checked, or the first half for the client and the
/// rest for the servers. One CPU: both share it (and the record says so).
pub fn choose(
    client: Option<Vec<usize>>,
    server: Option<Vec<usize>>,
    online: usize,
) -> Result<(Vec<usize>, Vec<usize>), String> {
    let all: Vec<usize> = (0..online).collect();
    let half = (online / 2).max(1);
    let client = client.unwrap_or_else(|| all[..half].to_vec());
    let server = server.unwrap_or_else(|| if online > 1 { all[half..].to_vec() } else { all.clone() });
    for (side, cpus) in [("client", &client), ("server", &server)] {
        if cpus.is_empty() {
            return Err(format!("the {side} needs at least one CPU"));
        }
        if let Some(bad) = cpus.iter().find(|c| **c >= online) {
            return Err(format!("{side} CPU {bad} does not exist (this machine has CPUs 0-{})", online - 1));
        }
    }
    if online > 1 && client.iter().any(|c| server.contains(c)) {
        return Err(format!("client CPUs {client:?} and server CPUs {server:?} overlap: they must not share a core"));
    }
    Ok((client, server))
}

/// Parses `0`, `0,1`, `2-3`.
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{text}' is not a CPU list (e.g. 0 or 0,1 or 2-3)");
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
        return Err(format!("'{text}' names no CPU"));
    }
    Ok(out)
}

/// Pins every thread of this process (threads made later inherit it from their creator).
pub fn pin_self(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays in bounds for the CPUs checked above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|e| format!("cannot list threads: {e}"))?;
    for tid in tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse::<i32>().ok()) {
        // SAFETY: plain syscall on a thread of this process.
        if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
            return Err(format!("cannot pin callbench to CPUs {cpus:?}: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Pins the calling thread alone to `cpu`.
pub fn pin_thread(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET is bounded by the set's size below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(format!("CPU {cpu} is out of range"));
    }
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pins the calling thread only.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("cannot pin to CPU {cpu}"))
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
        assert!(choose(Some(vec![0]), Some(vec![0, 1]), 2).unwrap_err().contains("overlap"));
        assert!(choose(Some(vec![0]), Some(vec![5]), 2).unwrap_err().contains("does not exist"));
    }

    #[test]
    fn parses_cpu_lists() {
        assert_eq!(parse_list("0").unwrap(), vec![0]);
        assert_eq!(parse_list("0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_list("x").is_err());
        assert!(parse_list("3-1").is_err());
    }
}
