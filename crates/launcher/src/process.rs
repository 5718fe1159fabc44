//! Server processes: started in their own process group (optionally pinned to
//! CPUs), stopped with SIGTERM then SIGKILL when dropped, and all killed by
//! `kill_all` when callbench itself is interrupted. No server outlives a run.

use crate::error::{because, chain, LaunchError};
use crate::manifest::{Manifest, Placeholders};
use crate::repo::Repo;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Process groups of the servers (and builds) alive now, for `kill_all`.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The exit code callbench owes a signal it received (130 for SIGINT...), 0 if none.
static INTERRUPTED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Records that callbench was interrupted: from now on a server ending is expected,
/// and the process must exit with `code` whatever the main flow concludes.
pub fn set_interrupted(code: i32) {
    INTERRUPTED.store(code, std::sync::atomic::Ordering::SeqCst);
}

/// The exit code of the signal that interrupted callbench, if one did.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        code => Some(code),
    }
}

/// How to start a server.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub host: String,
    /// None: a free port.
    pub port: Option<u16>,
    pub workers: usize,
    pub mode: String,
    /// CPUs the server is pinned to (sched_setaffinity before exec).
    pub cpus: Option<Vec<usize>>,
    /// Pass the server's stdout/stderr through (for `serve`) instead of keeping only the tail.
    pub echo_output: bool,
    /// The network namespace the server runs in (an open /run/netns file, e.g. an emulated link's
    /// server side); None: callbench's own.
    pub netns: Option<RawFd>,
    /// Serve TLS (the manifest's `[tls]` arguments added).
    pub tls: bool,
    /// More environment for the server (callbench's own settings, e.g. where to keep its count of answers).
    pub env: Vec<(String, String)>,
    /// The `cgroup.procs` of a CPU limit (see `cpu_limit`) the server enters before exec.
    pub cgroup: Option<std::ffi::CString>,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            host: "127.0.0.1".into(),
            port: None,
            workers: 1,
            mode: "preloaded".into(),
            cpus: None,
            echo_output: false,
            netns: None,
            tls: false,
            env: Vec::new(),
            cgroup: None,
        }
    }
}

pub struct ServerProcess {
    pub name: String,
    pub addr: SocketAddr,
    child: Child,
    output_tail: Arc<Mutex<VecDeque<String>>>,
    stopped: bool,
}

impl ServerProcess {
    /// Spawns the server (does not wait for it to be ready: see `verify::wait_ready`).
    pub fn start(repo: &Repo, manifest: &Manifest, options: &StartOptions) -> Result<ServerProcess, LaunchError> {
        if !manifest.supported {
            let why = format!("{} is not supported here: {}", manifest.name, manifest.unsupported_reason);
            return Err(LaunchError::NotOffered(why));
        }
        let port = match (options.port, options.netns) {
            (Some(port), _) => port,
            (None, None) => free_port(&options.host)?,
            (None, Some(netns)) => in_namespace(netns, || free_port(&options.host))?,
        };
        let values = Placeholders {
            host: options.host.clone(),
            port,
            workers: options.workers,
            mode: options.mode.clone(),
            users: repo.users_file()?,
        };
        let mut argv = manifest.start_argv(repo, &values);
        if options.tls {
            argv.extend(manifest.tls_args()?.iter().cloned());
        }
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir(manifest.cwd.as_deref().unwrap_or(&repo.root))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in &manifest.start.env {
            command.env(key, manifest.fill(repo, value, Some(&values)));
        }
        command.envs(options.env.iter().map(|(k, v)| (k, v)));
        let (cpus, netns, cgroup) = (options.cpus.clone(), options.netns, options.cgroup.clone());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if let Some(fd) = netns {
                    enter_namespace(fd)?;
                }
                if let Some(procs) = &cgroup {
                    crate::cpu_limit::enter(procs)?;
                }
                child_setup(cpus.as_deref().unwrap_or(&[]))
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| LaunchError::Start(because(format!("cannot start {} ({})", manifest.name, argv[0]), &e)))?;
        LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(child.id() as i32);
        let output_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(out) = child.stdout.take() {
            drain(out, output_tail.clone(), options.echo_output, false);
        }
        if let Some(err) = child.stderr.take() {
            drain(err, output_tail.clone(), options.echo_output, true);
        }
        let ip = options.host.parse().map_err(|e: std::net::AddrParseError| {
            LaunchError::Start(because(format!("host '{}' is not an IP address", options.host), &e))
        })?;
        Ok(ServerProcess {
            name: manifest.name.clone(),
            addr: SocketAddr::new(ip, port),
            child,
            output_tail,
            stopped: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status if the process has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last lines the server printed (stdout and stderr), for error messages.
    pub fn output_tail(&self) -> String {
        let tail = self.output_tail.lock().unwrap_or_else(|e| e.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Resident set size of the server's main process, in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// SIGTERM to the whole group, SIGKILL after `grace`; waits for the exit.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.stopped {
            return self.child.try_wait().ok().flatten();
        }
        self.stopped = true;
        let group = self.child.id() as i32;
        signal_group(group, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        let status = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break Some(status);
            }
            if Instant::now() >= deadline {
                signal_group(group, libc::SIGKILL);
                break self.child.wait().ok();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        signal_group(group, libc::SIGKILL); // anything the server forked and left behind
        LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| *g != group);
        status
    }

    /// Waits for the server to end by itself (e.g. in the foreground of `serve`).
    pub fn wait(&mut self) -> Result<ExitStatus, LaunchError> {
        self.child.wait().map_err(|e| LaunchError::Io(chain(&e)))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
    }
}

/// In a child between fork and exec: its own process group, death with callbench (even if
/// callbench is killed with SIGKILL), pinned to `cpus` (none: not pinned). Async-signal-safe.
pub fn child_setup(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: plain syscalls on the calling process.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if !cpus.is_empty() {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in cpus {
                libc::CPU_SET(cpu, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Moves the calling thread (or a child between fork and exec) into network namespace `fd`.
/// Async-signal-safe.
pub fn enter_namespace(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: a plain syscall on the calling thread.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `work` on a thread inside network namespace `fd` (sockets it opens belong there).
fn in_namespace<T: Send>(fd: RawFd, work: impl FnOnce() -> Result<T, LaunchError> + Send) -> Result<T, LaunchError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter_namespace(fd)
                .map_err(|e| LaunchError::Start(because("cannot enter the server's network namespace", &e)))?;
            work()
        })
        .join()
        .unwrap_or_else(|_| Err(LaunchError::Start("a thread in the server's network namespace panicked".into())))
    })
}

/// A process group `kill_all` must stop (a child started with `child_setup`).
pub fn register_group(group: i32) {
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(group);
}

pub fn unregister_group(group: i32) {
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| *g != group);
}

/// SIGKILL to a whole process group.
pub fn kill_group(group: i32) {
    signal_group(group, libc::SIGKILL);
}

/// Kills every server started by this process (on Ctrl-C, SIGTERM or a fatal
/// error): SIGTERM, up to two seconds to exit, then SIGKILL.
pub fn kill_all() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for &group in &groups {
        signal_group(group, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    // A group whose leader exited but is not reaped yet still "exists" for kill(2): reap what
    // ended (callbench is exiting; nothing else waits for these), then check.
    let gone = |g: i32| {
        // SAFETY: plain syscalls on our own children; signal 0 only checks that the group exists.
        unsafe {
            while libc::waitpid(-g, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            libc::kill(-g, 0) != 0
        }
    };
    while Instant::now() < deadline && !groups.iter().all(|&g| gone(g)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &group in &groups {
        signal_group(group, libc::SIGKILL);
    }
}

fn signal_group(group: i32, signal: i32) {
    if group > 0 {
        // SAFETY: plain syscall; a negative pid addresses the process group.
        unsafe {
            libc::kill(-group, signal);
        }
    }
}

/// A port that was free a moment ago on `host`.
pub fn free_port(host: &str) -> Result<u16, LaunchError> {
    let listener = std::net::TcpListener::bind((host, 0))
        .map_err(|e| LaunchError::Start(because(format!("cannot bind {host}:0"), &e)))?;
    Ok(listener.local_addr().map_err(|e| LaunchError::Start(chain(&e)))?.port())
}

fn drain(stream: impl Read + Send + 'static, tail: Arc<Mutex<VecDeque<String>>>, echo: bool, is_err: bool) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(|l| l.ok()) {
            // Our own output may be closed (a reader gone): the server's is still read to its
            // end, or a server that writes much would block on a full pipe.
            if echo {
                let _ =
                    if is_err { writeln!(std::io::stderr(), "{line}") } else { writeln!(std::io::stdout(), "{line}") };
            }
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == 20 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });
}

/// Builds a server with its manifest's build command (output to stderr). The
/// build runs in its own process group, registered like a server's, so an
/// interrupted callbench stops it too.
pub fn build(repo: &Repo, manifest: &Manifest) -> Result<(), LaunchError> {
    match manifest.build_argv(repo) {
        Some(argv) => run_build(repo, &manifest.name, &argv),
        None => Ok(()),
    }
}

/// Runs the build command `argv` of `name` from the repo root, in its own registered process group.
pub fn run_build(repo: &Repo, name: &str, argv: &[String]) -> Result<(), LaunchError> {
    let Some((program, args)) = argv.split_first() else { return Ok(()) };
    let mut command = Command::new(program);
    command.args(args).current_dir(&repo.root).stdin(Stdio::null()).stdout(Stdio::inherit()).stderr(Stdio::inherit());
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| LaunchError::Build(because(format!("cannot run the build of {name} ({})", argv.join(" ")), &e)))?;
    let group = child.id() as i32;
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(group);
    let status = child.wait();
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| *g != group);
    let status = status.map_err(|e| LaunchError::Build(because(format!("waiting for the build of {name}"), &e)))?;
    if !status.success() {
        return Err(LaunchError::Build(format!("building {name} failed ({status}): {}", argv.join(" "))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(extra: &str) -> Manifest {
        let text = format!(
            "name='x'\nlanguage='l'\nframework='f'\nprotocol='rest'\n{extra}\n[start]\ncommand=['/nonexistent/x']"
        );
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn what_stops_a_start_is_told_apart() {
        // Both fail before anything is written or spawned.
        let repo = Repo { root: std::env::temp_dir().join("callbench-launcher-test") };
        let not_here = manifest("supported=false\nunsupported_reason='needs io_uring'");
        let e = ServerProcess::start(&repo, &not_here, &StartOptions::default()).err().unwrap();
        assert_eq!(e, LaunchError::NotOffered("x is not supported here: needs io_uring".into()));
        let bad_host = StartOptions { host: "no such host".into(), ..StartOptions::default() };
        let e = ServerProcess::start(&repo, &manifest(""), &bad_host).err().unwrap();
        assert!(matches!(&e, LaunchError::Start(m) if m.starts_with("cannot bind no such host:0: ")), "{e:?}");
    }
}
