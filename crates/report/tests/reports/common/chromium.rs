//! Headless Chromium for the HTML report tests: a private profile and home in a temp folder, a
//! 60 s limit, and every process it started killed before returning (its own process group, plus
//! the crash handlers that leave the group but name the private folder on their command line).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The `chromium` binary on PATH; the test fails (never skips) without it.
pub fn find() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|p| p.is_file()).unwrap_or_else(|| {
        panic!("chromium is not installed: run scripts/setup (it installs Debian's `chromium` package)")
    })
}

pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

/// Runs `chromium --headless … args` with its profile, home and caches under `dir`.
pub fn run(dir: &Path, args: &[String]) -> Output {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(find())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-breakpad",
            "--disable-crash-reporter",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let group = Group { pgid: child.id() as i32, dir: dir.to_path_buf() };
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = vec![];
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            group.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {TIMEOUT:?}: killed (args {args:?})");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(group); // its helpers may outlive the browser: end them so the pipes close
    let out = Output { stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() };
    assert!(status.success(), "chromium failed ({status}):\n{}", out.stderr);
    out
}

/// Chromium's processes: its process group, and any process naming the private folder.
struct Group {
    pgid: i32,
    dir: PathBuf,
}

impl Group {
    fn kill(&self) {
        if self.pgid > 0 {
            // SAFETY: kill has no memory-safety preconditions; a negative pid names our child's group.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
        for pid in strays(&self.dir) {
            // SAFETY: as above; `pid` was started by this chromium (its command line names our folder).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !strays(&self.dir).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            self.kill();
        }
    }
}

/// Live processes (zombies have no command line) whose command line mentions `dir`.
pub fn strays(dir: &Path) -> Vec<i32> {
    let needle = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else { return vec![] };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != std::process::id() as i32)
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !cmdline.is_empty() && String::from_utf8_lossy(&cmdline).contains(&needle)
        })
        .collect()
}
