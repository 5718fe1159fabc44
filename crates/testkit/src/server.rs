//! Starts a real server binary on port 0 (killed when dropped, even on a failed assert).

use crate::http1::{Conn, Response};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// A running server; killed (and its temp dir removed) when dropped, even on a failed assert.
pub struct Server {
    child: Child,
    dir: PathBuf,
    stderr: Arc<Mutex<Vec<String>>>,
    pub addr: String,
}

impl Server {
    pub fn start(bin: &str, extra_args: &[&str]) -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("callbench-testkit-{}-{n}", std::process::id()));
        let users = dir.join("users.json");
        callbench_workloads::users::write_users_json(&users).expect("write users.json");
        let child = Command::new(bin)
            .args(["--port", "0", "--users"])
            .arg(&users)
            .args(extra_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut server = Server { child, dir, stderr: Arc::default(), addr: String::new() };
        server.keep_stderr();
        server.addr = server.wait_for_listening_line();
        server
    }

    /// Keeps the server's stderr lines (and passes them on to the test's own output).
    fn keep_stderr(&mut self) {
        let stderr = self.child.stderr.take().expect("piped stderr");
        let lines = self.stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("{line}");
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });
    }

    /// The first stderr line containing `text`, waiting up to 5 s for it.
    pub fn stderr_line(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(line) = lines.iter().find(|l| l.contains(text)) {
                return line.clone();
            }
            assert!(start.elapsed() < Duration::from_secs(5), "no stderr line with {text:?} in 5 s: {lines:?}");
            drop(lines);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port of `addr`.
    /// True while the server runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's process id (for `--server-pid`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().and_then(|p| p.parse().ok()).expect("HOST:PORT")
    }

    fn wait_for_listening_line(&mut self) -> String {
        let stdout = self.child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("no `listening on` line in 20 s");
        let addr =
            line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        addr.to_string()
    }

    pub fn connect(&self) -> Conn {
        Conn::connect(self.addr.parse().unwrap_or_else(|e| panic!("address {:?}: {e}", self.addr)))
    }

    /// One request on a fresh connection.
    pub fn call(&self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Response {
        self.connect().call(method, path, content_type, body)
    }

    /// Sends `signal` (e.g. "TERM") and waits up to `limit` for the exit.
    pub fn stop(mut self, signal: &str, limit: Duration) -> Option<ExitStatus> {
        let pid = self.child.id().to_string();
        Command::new("kill").args([&format!("-{signal}"), &pid]).status().expect("run kill");
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
