//! Running a tool's [`Invocation`]: its files written, the program found, the process pinned to
//! the client CPUs in a process group of its own, stopped at its time limit or on cancel, and
//! measured from outside (wait4: CPU time and peak memory of the tool and the processes it waited
//! for). No process of the tool outlives the call.

use crate::error::PeerError;
use crate::load::{Invocation, Output};
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a tool's process ended, and what it cost.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Its output, for [`crate::Tool::parse`]: with a report command (vegeta's), `stdout` is the
    /// report's and the tool's own is in `tool_stdout`.
    pub output: Output,
    pub tool_stdout: String,
    /// Its exit code, or the signal that ended it.
    pub exit: Exit,
    /// Stopped by callbench: past its time limit, or cancelled.
    pub timed_out: bool,
    pub cancelled: bool,
    pub wall: Duration,
    /// User and system CPU time of the process and the children it waited for.
    pub user: Duration,
    pub system: Duration,
    /// The largest resident set of any one of those processes (the kernel's ru_maxrss), KiB.
    pub max_rss_kib: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// Where `program` is: on PATH, in Go's and Cargo's bin folders, or in `extra` folders.
pub fn locate(program: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    if let Some(gopath) = std::env::var_os("GOPATH") {
        dirs.extend(std::env::split_paths(&gopath).map(|p| p.join("bin")));
    }
    if let Some(home) = &home {
        dirs.push(home.join("go/bin"));
        dirs.push(home.join(".cargo/bin"));
    }
    dirs.extend(extra.iter().cloned());
    dirs.into_iter().map(|d| d.join(program)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `invocation` with `program` as its argv[0] in `dir`, pinned to `cpus` (none: unpinned),
/// in the network namespace `netns` (an open /run/netns file; None: this thread's), for at most
/// `limit`; `cancel` stops it early. Blocks until every process of its group is gone. Err: its
/// files or output cannot be written or it cannot be started ([`PeerError::Run`]), or its report
/// command is not installed ([`PeerError::Missing`]); a tool that ran and failed is an Ok [`Finished`].
pub fn run(
    invocation: &Invocation,
    program: &Path,
    dir: &Path,
    cpus: &[usize],
    netns: Option<RawFd>,
    limit: Duration,
    cancel: &AtomicBool,
) -> Result<Finished, PeerError> {
    std::fs::create_dir_all(dir).map_err(|e| PeerError::Run(format!("{}: {e}", dir.display())))?;
    for (name, bytes) in &invocation.files {
        std::fs::write(dir.join(name), bytes).map_err(|e| PeerError::Run(format!("{name}: {e}")))?;
    }
    // A report left by an earlier run in the same folder must not pass for this one's.
    for name in &invocation.outputs {
        let _ = std::fs::remove_file(dir.join(name));
    }
    let (stdout_path, stderr_path) = (dir.join("tool.stdout"), dir.join("tool.stderr"));
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| PeerError::Run(format!("{}: {e}", p.display())));
    let mut command = Command::new(program);
    command
        .args(&invocation.argv[1..])
        .current_dir(dir)
        .envs(invocation.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(file(&stdout_path)?)
        .stderr(file(&stderr_path)?)
        .process_group(0);
    let cpus = cpus.to_vec();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // The tool dies with callbench, even when callbench is killed.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if let Some(fd) = netns {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if !cpus.is_empty() {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &cpu in &cpus {
                    libc::CPU_SET(cpu, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let child = command.spawn().map_err(|e| PeerError::Run(format!("cannot start {}: {e}", program.display())))?;
    let pid = child.id() as i32;
    let (status, usage, timed_out, cancelled) = wait(pid, started + limit, cancel);
    let wall = started.elapsed();
    // Whatever the tool left running in its group goes with it.
    // SAFETY: signals to the group this function created.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let exit = if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    };
    let _ = std::process::ExitStatus::from_raw(status);
    let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let mut output = Output { stdout: read(&stdout_path), stderr: read(&stderr_path), ..Output::default() };
    for name in &invocation.outputs {
        if let Ok(bytes) = std::fs::read(dir.join(name)) {
            output.files.insert(name.clone(), String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    let tool_stdout = output.stdout.clone();
    if let (Some(report), false) = (&invocation.report, cancelled) {
        let program = locate(&report[0], &[program.parent().unwrap_or(dir).to_path_buf()])
            .ok_or_else(|| PeerError::Missing(format!("{} is not installed", report[0])))?;
        let out = Command::new(program)
            .args(&report[1..])
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PeerError::Run(format!("{}: {e}", report.join(" "))))?;
        output.stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        output.stderr += &String::from_utf8_lossy(&out.stderr);
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(Finished {
        output,
        tool_stdout,
        exit,
        timed_out,
        cancelled,
        wall,
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss as u64,
    })
}

/// Waits for `pid` to end, polling so that the deadline and `cancel` are seen within 20 ms: SIGTERM
/// to its group then, SIGKILL 3 s later. Returns its wait status and rusage.
fn wait(pid: i32, deadline: Instant, cancel: &AtomicBool) -> (i32, libc::rusage, bool, bool) {
    let (mut timed_out, mut cancelled, mut terminated_at) = (false, false, None::<Instant>);
    loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid || got < 0 {
            return (status, usage, timed_out, cancelled);
        }
        let now = Instant::now();
        match terminated_at {
            None if now >= deadline || cancel.load(Ordering::Relaxed) => {
                timed_out = now >= deadline;
                cancelled = !timed_out;
                // SAFETY: a signal to the tool's own group.
                unsafe { libc::kill(-pid, libc::SIGTERM) };
                terminated_at = Some(now);
            }
            Some(t) if now >= t + Duration::from_secs(3) => unsafe {
                libc::kill(-pid, libc::SIGKILL);
            },
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Invocation {
        Invocation::new(["sh", "-c", script])
    }

    fn dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("callbench-peers-{}-{name}", std::process::id()))
    }

    #[test]
    fn runs_a_command_with_its_files_and_measures_it() {
        let mut i =
            sh("cat input.txt; echo oops >&2; echo report > out.txt; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done");
        i.files.push(("input.txt".into(), b"hello".to_vec()));
        i.outputs.push("out.txt".into());
        let d = dir("ok");
        let f = run(&i, &locate("sh", &[]).unwrap(), &d, &[0], None, Duration::from_secs(60), &AtomicBool::new(false))
            .unwrap();
        assert_eq!((f.output.stdout.as_str(), f.output.stderr.as_str(), f.exit), ("hello", "oops\n", Exit::Code(0)));
        assert_eq!(f.output.files["out.txt"], "report\n");
        assert!(f.user + f.system > Duration::ZERO && f.max_rss_kib > 0, "{f:?}");
        assert!(!f.timed_out && !f.cancelled);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_tool_past_its_limit_is_stopped_with_its_children() {
        let d = dir("limit");
        // A shell that starts a long sleep in its group and waits for it.
        let i = sh("sleep 600 & echo $! > child.pid; wait");
        let f =
            run(&i, &locate("sh", &[]).unwrap(), &d, &[], None, Duration::from_millis(300), &AtomicBool::new(false))
                .unwrap();
        assert!(f.timed_out && f.exit == Exit::Signal(libc::SIGTERM), "{f:?}");
        let child: i32 = std::fs::read_to_string(d.join("child.pid")).unwrap().trim().parse().unwrap();
        // The sleep was killed with the group: it is gone (or a zombie) within moments.
        let gone = || {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            stat.is_empty() || stat.contains(") Z") || stat.contains(") X")
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gone() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(gone(), "the tool's child outlived it");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_program_that_cannot_start_is_a_failed_run() {
        let d = dir("nostart");
        let err = run(
            &sh("true"),
            Path::new("/nonexistent/tool"),
            &d,
            &[],
            None,
            Duration::from_secs(5),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(&err, PeerError::Run(m) if m.starts_with("cannot start /nonexistent/tool")), "{err:?}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_program_is_none() {
        assert!(locate("callbench-no-such-tool", &[]).is_none());
        assert!(locate("sh", &[]).is_some());
    }
}
