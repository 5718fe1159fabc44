//! What the integration tests share: paths in the repo, scratch directories,
//! the real rust-tonic server (killed on drop), and one raw unary gRPC call.
#![allow(dead_code)] // each test file uses its own part

pub mod tls;

use bytes::{Buf, Bytes, BytesMut};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn repo_root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR")).join("../..")
}

/// The contract's .proto files and their import path.
pub fn contract_protos() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let files = ["auth", "students", "cars", "life", "echo", "records"]
        .iter()
        .map(|name| PathBuf::from(format!("callbench/v1/{name}.proto")))
        .collect();
    (files, vec![repo_root().join("contract/proto")])
}

/// A fresh, empty directory of its own for each call: tests running side by side in one process
/// (`cargo test`) start servers with the same `name`.
pub fn scratch(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dynproto-{name}-{}-{call}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir is created");
    dir
}

/// target/release (or target/debug): where `cargo build -p rust-tonic` put the server.
fn server_binary() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("CARGO_TARGET_TMPDIR is target/tmp");
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let binary = target.join(profile).join("rust-tonic");
    assert!(
        binary.is_file(),
        "{} is missing: build it first with `cargo build --release --locked -p rust-tonic`",
        binary.display()
    );
    binary
}

/// The reference gRPC server on a free loopback port, killed when dropped
/// (also when the test fails).
pub struct TonicServer {
    child: Child,
    pub addr: SocketAddr,
}

impl TonicServer {
    pub fn start() -> TonicServer {
        TonicServer::start_with(&[])
    }

    /// With extra flags (e.g. `--tls`).
    pub fn start_with(flags: &[&str]) -> TonicServer {
        let users = scratch("users").join("users.json");
        callbench_workloads::users::write_users_json(&users).expect("users.json is written");
        let mut child = Command::new(server_binary())
            .args(["--host", "127.0.0.1", "--port", "0", "--users"])
            .arg(&users)
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("rust-tonic starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        // Owned from here: a failure below still kills the child.
        let mut server = TonicServer { child, addr: SocketAddr::from(([127, 0, 0, 1], 0)) };
        let (lines, line) = mpsc::channel();
        std::thread::spawn(move || {
            for text in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(text);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let text = line.recv_timeout(left).expect("rust-tonic prints `listening on HOST:PORT`");
            if let Some(addr) = text.strip_prefix("listening on ") {
                server.addr = addr.trim().parse().expect("an address after `listening on`");
                return server;
            }
        }
    }
}

impl Drop for TonicServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One unary call with an h2c connection of its own (the engine's client): (grpc-status,
/// response message bytes).
pub async fn unary_call(addr: SocketAddr, path: &str, message: &[u8]) -> (String, Bytes) {
    use callbench_engine::h2pool::{request_block, Connection};
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connects");
    let connection = Connection::start(tcp);
    let headers = [("content-type".to_string(), "application/grpc".to_string()), ("te".into(), "trailers".into())];
    let blocks = request_block("POST", false, &addr.to_string(), path, &headers);
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(message);
    let mut data = BytesMut::new();
    let answer =
        connection.exchange(&blocks, &Bytes::from(frame), |chunk| data.extend_from_slice(chunk)).await.expect("answer");
    let status = answer
        .trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| answer.headers.get("grpc-status"))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default();
    if data.len() < 5 {
        return (status, Bytes::new());
    }
    data.advance(5);
    (status, data.freeze())
}
