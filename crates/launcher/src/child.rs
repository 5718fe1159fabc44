//! One short-lived child process, run to its end: pinned, in its own registered process group (killed
//! on Ctrl-C and with callbench), its output captured, its wall time from spawn to exit and its CPU
//! time and peak RSS from `wait4`. Processing programs and Python callers run this way.

use crate::error::{because, LaunchError};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug, Clone)]
pub struct Finished {
    pub stdout: String,
    pub stderr: String,
    /// The exit code; None if a signal ended it.
    pub code: Option<i32>,
    /// From spawn to exit, seen from outside.
    pub wall: Duration,
    /// User + system CPU of the process and its waited-for children.
    pub cpu: Duration,
    pub max_rss_kib: u64,
    /// `cancel` was set while it ran (it was killed).
    pub cancelled: bool,
}

impl Finished {
    pub fn succeeded(&self) -> bool {
        self.code == Some(0) && !self.cancelled
    }

    /// `exit 1: <the last line it wrote on stderr>`, for error messages.
    pub fn failure(&self) -> String {
        let how = self.code.map_or("killed".to_string(), |c| format!("exit {c}"));
        let last = self.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        if last.is_empty() {
            how
        } else {
            format!("{how}: {last}")
        }
    }
}

/// Runs `command` (stdin closed, output captured) pinned to `cpus` until it exits; setting `cancel`
/// kills its process group. Anything it forked and left behind is killed when it exits.
pub fn run_pinned(mut command: Command, cpus: &[usize], cancel: &AtomicBool) -> Result<Finished, LaunchError> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let cpus = cpus.to_vec();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || crate::process::child_setup(&cpus));
    }
    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| LaunchError::Start(because(format!("cannot start {:?}", command.get_program()), &e)))?;
    let pid = child.id() as i32;
    crate::process::register_group(pid);
    let reader = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = from.read_to_string(&mut s);
            s
        })
    };
    let out_reader = reader(Box::new(child.stdout.take().expect("piped")));
    let err_reader = reader(Box::new(child.stderr.take().expect("piped")));
    // wait4 blocks in its own thread (for the exact exit time and the rusage); this one watches
    // for Ctrl-C.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: plain syscall on our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let _ = tx.send((rc, status, usage, started.elapsed()));
    });
    let (rc, status, usage, wall) = loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(done) => break done,
            Err(_) if cancel.load(Ordering::Relaxed) => crate::process::kill_group(pid),
            Err(_) => {}
        }
    };
    crate::process::kill_group(pid); // anything it forked and left behind
    crate::process::unregister_group(pid);
    std::mem::forget(child); // reaped by wait4 above
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let exited = rc == pid && libc::WIFEXITED(status);
    Ok(Finished {
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        code: exited.then(|| libc::WEXITSTATUS(status)),
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss as u64,
        cancelled: cancel.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn output_status_and_times() {
        let done = run_pinned(sh("echo out; echo err >&2; exit 3"), &[], &AtomicBool::new(false)).unwrap();
        assert_eq!((done.stdout.as_str(), done.code, done.cancelled), ("out\n", Some(3), false));
        assert_eq!(done.failure(), "exit 3: err");
        assert!(!done.succeeded());
        let ok = run_pinned(sh("true"), &[0], &AtomicBool::new(false)).unwrap();
        assert!(ok.succeeded(), "{ok:?}");
    }

    #[test]
    fn cancel_kills_the_child_and_what_it_forked() {
        let cancel = std::sync::Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let done = run_pinned(sh("sleep 30 & sleep 30"), &[], &cancel).unwrap();
        assert!(done.cancelled && done.code.is_none(), "{done:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let err = run_pinned(Command::new("/nonexistent/callbench-test"), &[], &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(&err, LaunchError::Start(m) if m.contains("cannot start")), "{err:?}");
    }
}
