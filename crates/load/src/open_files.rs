//! The open-files limit against the sockets a run holds: the soft limit is raised to what the run
//! needs when the hard limit allows it (as Go's runtime does at start), and a run that needs more
//! than the hard limit is refused before it starts, with how to raise it.

use crate::error::LoadError;

/// Files the process holds beside its sockets: standard streams, the runtime's, a ring, the output.
pub const RESERVED: u64 = 64;

/// This process's open-files limits: (soft, hard).
pub fn limits() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0).then_some((limit.rlim_cur, limit.rlim_max))
}

/// Makes room for `sockets` open at once; an error naming the limit when the hard limit is lower.
pub fn ensure(sockets: usize) -> Result<(), LoadError> {
    let Some((soft, hard)) = limits() else { return Ok(()) };
    let needed = sockets as u64 + RESERVED;
    if needed <= soft {
        return Ok(());
    }
    if needed > hard {
        return Err(LoadError::Machine(format!(
            "{sockets} connections need about {needed} open files, above this process's hard limit of {hard}: \
             raise it (as root: `ulimit -Hn {needed}` then `ulimit -n {needed}` in the shell that runs callbench; \
             LimitNOFILE= for a service) or open fewer connections"
        )));
    }
    let raised = libc::rlimit { rlim_cur: needed, rlim_max: hard };
    // SAFETY: setrlimit reads one rlimit through a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(LoadError::Machine(format!(
            "{sockets} connections need about {needed} open files; raising the limit of {soft} failed: {e}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_to_what_a_run_needs_and_no_further() {
        let (soft, hard) = limits().unwrap();
        let within = (soft.min(hard - RESERVED) / 2) as usize; // already room: nothing changes
        ensure(within).unwrap();
        assert_eq!(limits().unwrap(), (soft, hard));
        if hard > soft {
            let more = (hard - RESERVED).min(soft + 100) as usize;
            ensure(more).unwrap();
            assert_eq!(limits().unwrap(), (more as u64 + RESERVED, hard));
        }
    }

    #[test]
    fn beyond_the_hard_limit_is_refused_with_how_to_raise_it() {
        let (_, hard) = limits().unwrap();
        if hard >= u64::MAX / 2 {
            return; // unlimited: nothing to refuse
        }
        let LoadError::Machine(e) = ensure(hard as usize).unwrap_err() else { panic!("a machine limit") };
        assert!(e.contains(&format!("hard limit of {hard}")) && e.contains("ulimit -n"), "{e}");
    }
}
