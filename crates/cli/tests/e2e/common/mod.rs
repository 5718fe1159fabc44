//! Shared by the `load_*` end-to-end tests: the real `callbench load` binary against real servers
//! on 127.0.0.1, every process killed when its guard drops (even when an assert fails), every wait
//! bounded, and every JSON report checked against `schemas/load.schema.json`.

#![allow(dead_code)]

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use callbench_testkit::server::Server;

pub mod h2_frames;
pub mod hostile;
pub mod hostile_quic;
pub mod nginx;
pub mod prometheus;

/// The longest any one `callbench load` of these tests may take before it is killed.
pub const RUN_LIMIT: Duration = Duration::from_secs(30);

pub fn callbench() -> &'static str {
    env!("CARGO_BIN_EXE_callbench")
}

/// The checkout's root.
pub fn repo() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout")
}

/// A reference server's binary (`target/release/NAME`, beside `callbench`). `cargo test -p callbench`
/// does not build the servers: when one is missing, the workspace is built once, as `callbench serve` does.
pub fn server_bin(name: &str) -> String {
    static BUILD: Mutex<()> = Mutex::new(());
    let dir = Path::new(callbench()).parent().expect("the binary's directory").to_path_buf();
    let bin = dir.join(name);
    if !bin.exists() {
        let _once = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        if !bin.exists() {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--release", "--locked", "--workspace"])
                .current_dir(repo())
                .status()
                .expect("run cargo build");
            assert!(status.success(), "cargo build --release --workspace failed");
        }
    }
    assert!(bin.exists(), "{} missing after the workspace build", bin.display());
    bin.to_string_lossy().into_owned()
}

/// Starts a reference server (`rust-actix`, `rust-axum`, `rust-tonic`) on a free loopback port.
pub fn start(name: &str, extra_args: &[&str]) -> Server {
    Server::start(&server_bin(name), extra_args)
}

/// A child process killed (and reaped) when dropped.
pub struct Guard {
    pub child: Child,
}

impl Guard {
    pub fn spawn(cmd: &mut Command) -> Guard {
        Guard { child: cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}")) }
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, waiting at most `limit` (None: still running).
    pub fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// True while the process runs (its exit status is kept for `wait_for`).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn signal(&self, signal: i32) {
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one `callbench load` did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    pub fn all(&self) -> String {
        format!("exit {:?} after {:?}\n--- stdout\n{}--- stderr\n{}", self.code, self.elapsed, self.stdout, self.stderr)
    }
}

/// Reads a pipe to its end on a thread.
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut pipe = pipe;
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `callbench load ARGS` (killed after `RUN_LIMIT`); its stderr never holds a panic.
pub fn load(args: &[&str]) -> Run {
    let mut cmd = Command::new(callbench());
    cmd.arg("load").args(args);
    run_cmd(&mut cmd)
}

pub fn run_cmd(cmd: &mut Command) -> Run {
    let start = Instant::now();
    let mut guard =
        Guard::spawn(cmd.current_dir(repo()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()));
    let out = drain(guard.child.stdout.take().expect("piped stdout"));
    let err = drain(guard.child.stderr.take().expect("piped stderr"));
    let status = guard.wait_for(RUN_LIMIT);
    let elapsed = start.elapsed();
    drop(guard); // kills it if it is still running, so the pipes close
    let run =
        Run { code: status.and_then(|s| s.code()), stdout: out.join().unwrap(), stderr: err.join().unwrap(), elapsed };
    assert!(status.is_some(), "{cmd:?} still running after {RUN_LIMIT:?}:\n{}", run.all());
    assert_no_panic(&run);
    run
}

pub fn assert_no_panic(run: &Run) {
    assert!(!run.stderr.contains("panicked"), "a panic:\n{}", run.all());
    assert!(!run.stdout.contains("panicked"), "a panic:\n{}", run.all());
}

/// `callbench load -o json ARGS`: must succeed (or exit 1 saying no call succeeded, with a report of no successful call); the report is checked against the schema.
pub fn load_json(args: &[&str]) -> Value {
    let mut all = vec!["-o", "json", "-q"];
    all.extend_from_slice(args);
    let run = load(&all);
    // A run where no call succeeded exits 1 with one line (load_outputs checks it), its report written all the same.
    let none_succeeded = run.code == Some(1) && run.stderr.trim().starts_with("callbench: error: no call succeeded");
    assert!(run.code == Some(0) || none_succeeded, "callbench load {args:?}:\n{}", run.all());
    let report: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}) from {args:?}:\n{}", run.all()));
    validate(&report);
    assert!(!none_succeeded || ok(&report) == 0, "exit 1 only when no call succeeded: {report:#}");
    report
}

/// `callbench load ARGS` must fail: exit code 1, one line on stderr containing `needle`, no panic.
pub fn load_fails(args: &[&str], needle: &str) -> Run {
    let run = load(args);
    assert_eq!(run.code, Some(1), "callbench load {args:?} should fail:\n{}", run.all());
    assert_one_line(&run, needle);
    run
}

/// A single-line error (clap's usage errors add a usage line and a hint: only the first line must name it).
pub fn assert_one_line(run: &Run, needle: &str) {
    let lines: Vec<&str> = run.stderr.trim_end().lines().collect();
    assert_eq!(lines.len(), 1, "not one line on stderr:\n{}", run.all());
    assert!(lines[0].contains(needle), "{needle:?} not in the error:\n{}", run.all());
}

/// The load report schema, compiled once.
fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| validator("schemas/load.schema.json"))
}

/// Asserts `results` (a results.json) follows `schemas/results.schema.json`.
pub fn validate_results(results: &Value) {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| validator("schemas/results.schema.json"));
    let errors: Vec<String> = schema.iter_errors(results).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "results.json breaks the schema:\n{}", errors.join("\n"));
}

fn validator(relative: &str) -> jsonschema::Validator {
    let path = repo().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON schema")
}

/// Asserts `report` follows `schemas/load.schema.json`.
pub fn validate(report: &Value) {
    let errors: Vec<String> = schema().iter_errors(report).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "the report breaks the schema:\n{}\n{report:#}", errors.join("\n"));
}

/// A number in the report by JSON pointer (`/calls/ok`).
pub fn num(report: &Value, pointer: &str) -> f64 {
    report.pointer(pointer).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number at {pointer} in {report:#}"))
}

pub fn ok(report: &Value) -> u64 {
    num(report, "/calls/ok") as u64
}

pub fn failed(report: &Value) -> u64 {
    num(report, "/calls/errors") as u64
}

/// All calls ok (exactly `calls` of them) and no error of any kind.
pub fn assert_all_ok(report: &Value, calls: u64) {
    assert_eq!(ok(report), calls, "{report:#}");
    assert_eq!(failed(report), 0, "{report:#}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report:#}");
}

/// A fresh directory under the temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("callbench-load-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn str(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A loopback port that was free a moment ago (for servers that cannot be told port 0).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits (at most `limit`) until `addr` accepts a TCP connection.
pub fn wait_listening(addr: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(addr).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Established TCP connections from this machine to `port` (the client ends, from /proc/net/tcp
/// and tcp6): how a test knows a load run is under way without guessing how long start-up takes.
pub fn connections_to(port: u16) -> usize {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>())
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port =
                fields.get(2).and_then(|r| r.rsplit(':').next()).and_then(|p| u16::from_str_radix(p, 16).ok());
            remote_port == Some(port) && fields.get(3) == Some(&"01")
        })
        .count()
}

/// The port of `host:port`.
pub fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no port in {addr}"))
}

/// Waits (at most `limit`) until `n` connections to `port` are established.
pub fn wait_connected(port: u16, n: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if connections_to(port) >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The direct children of `pid` (from /proc).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else { continue };
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.extend(entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()));
        }
    }
    out
}

/// Polls a background callbench every 20 ms until it ends (at most `limit`), collecting the pids of
/// its children (the servers `run` starts) and calling `tick(callbench pid, servers so far)`.
pub fn watch_children(running: &mut Running, limit: Duration, mut tick: impl FnMut(u32, &[u32])) -> Vec<u32> {
    let mut children: Vec<u32> = Vec::new();
    let deadline = Instant::now() + limit;
    while running.guard.alive() && Instant::now() < deadline {
        for pid in children_of(running.guard.id()) {
            if !children.contains(&pid) {
                children.push(pid);
            }
        }
        tick(running.guard.id(), &children);
        std::thread::sleep(Duration::from_millis(20));
    }
    children
}

/// An external tool installed by `scripts/setup`; the test fails (not skips) without it.
pub fn installed(path: &str) -> String {
    let path = match path.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", std::env::var("HOME").unwrap_or_else(|_| "/root".into())),
        None => path.to_string(),
    };
    assert!(Path::new(&path).exists(), "{path} is missing: run scripts/setup");
    path
}

/// `callbench load ARGS` left running (killed when the guard drops); its output is read on threads.
pub struct Running {
    pub guard: Guard,
    stdout: Option<std::thread::JoinHandle<String>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    started: Instant,
}

impl Running {
    pub fn start(args: &[&str]) -> Running {
        Running::command("load", args)
    }

    /// `callbench SUBCOMMAND ARGS` in the background.
    pub fn command(subcommand: &str, args: &[&str]) -> Running {
        let started = Instant::now();
        let mut guard = Guard::spawn(
            Command::new(callbench())
                .arg(subcommand)
                .args(args)
                .current_dir(repo())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        let stdout = Some(drain(guard.child.stdout.take().expect("piped stdout")));
        let stderr = Some(drain(guard.child.stderr.take().expect("piped stderr")));
        Running { guard, stdout, stderr, started }
    }

    /// Waits at most `limit` for the end; the run's output (its code None if it had to be killed).
    pub fn finish(mut self, limit: Duration) -> Run {
        let status = self.guard.wait_for(limit);
        if status.is_none() {
            let _ = self.guard.child.kill();
            let _ = self.guard.child.wait();
        }
        let run = Run {
            code: status.and_then(|s| s.code()),
            stdout: self.stdout.take().unwrap().join().unwrap(),
            stderr: self.stderr.take().unwrap().join().unwrap(),
            elapsed: self.started.elapsed(),
        };
        assert!(status.is_some(), "callbench did not end within {limit:?}:\n{}", run.all());
        assert_no_panic(&run);
        run
    }
}

/// Where the kernel keeps the request that holds idle CPUs awake (`--keep-cpus-awake`, `callbench run`).
const IDLE_DEVICE: &str = "/dev/cpu_dma_latency";

/// The kernel's current idle-latency request, as the device reports it (None where it cannot be read).
pub fn idle_request() -> Option<Vec<u8>> {
    std::fs::read(IDLE_DEVICE).ok()
}

/// Whether this user may ask the kernel to keep idle CPUs awake (root, as CI runs).
pub fn idle_request_writable() -> bool {
    std::fs::OpenOptions::new().write(true).open(IDLE_DEVICE).is_ok()
}
