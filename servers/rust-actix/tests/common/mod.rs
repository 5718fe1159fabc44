//! Starts the real server binary on port 0 and talks raw HTTP/1.1 to it, so every header is ours.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_rust-actix");

/// A running server; killed (and its temp dir removed) when dropped, even on a failed assert.
pub struct Server {
    child: Child,
    dir: PathBuf,
    pub addr: String,
}

impl Server {
    pub fn start(extra_args: &[&str]) -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("callbench-{}-{}-{n}", env!("CARGO_PKG_NAME"), std::process::id()));
        let users = dir.join("users.json");
        callbench_workloads::users::write_users_json(&users).expect("write users.json");
        let child = Command::new(BIN)
            .args(["--port", "0", "--users"])
            .arg(&users)
            .args(extra_args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut server = Server { child, dir, addr: String::new() };
        server.addr = server.wait_for_listening_line();
        server
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
        let stream = TcpStream::connect(&self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(20))).expect("read timeout");
        Conn { reader: BufReader::new(stream) }
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

/// One keep-alive connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// `error.code` of a contract error body.
    pub fn error_code(&self) -> String {
        self.json()["error"]["code"].as_str().unwrap_or_default().to_string()
    }
}

impl Conn {
    /// Sends a request (no Content-Type header when `content_type` is None) and reads the answer.
    pub fn call(&mut self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Response {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\n");
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        if !body.is_empty() || method == "PUT" || method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes()).expect("write head");
        // A server may answer (413) and stop reading before the body is all sent.
        let _ = stream.write_all(body);
        self.read_response()
    }

    fn read_response(&mut self) -> Response {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("read header");
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let mut response = Response { status, headers, body: Vec::new() };
        let length: usize =
            response.header("content-length").and_then(|v| v.parse().ok()).expect("servers answer with Content-Length");
        response.body.resize(length, 0);
        self.reader.read_exact(&mut response.body).expect("read body");
        response
    }
}

/// A JSON body of exactly `size` bytes: `prefix`, spaces, `suffix`.
pub fn padded_json(prefix: &str, suffix: &str, size: usize) -> Vec<u8> {
    let mut body = prefix.as_bytes().to_vec();
    body.resize(size - suffix.len(), b' ');
    body.extend_from_slice(suffix.as_bytes());
    body
}
