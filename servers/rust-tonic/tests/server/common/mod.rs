//! What the integration tests share: the built server started on a free port
//! (and always killed), tonic channels to it, and raw HTTP/2 calls for the
//! requests a tonic client cannot send.
#![allow(dead_code)] // each test file uses its own part

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};
use tonic::transport::{Channel, Endpoint};

/// The users file, written once per test binary (threads of one process
/// would race on write_users_json's temporary file).
pub fn users_file() -> &'static Path {
    static USERS: OnceLock<PathBuf> = OnceLock::new();
    USERS.get_or_init(|| {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-tonic-tests/users.json");
        callbench_workloads::users::write_users_json(&path).expect("users.json is written");
        path
    })
}

/// The server binary, running until dropped (killed even if the test panics).
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// Starts the server on port 0 with these extra flags and waits for its `listening on` line.
    pub fn start_with(flags: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rust-tonic"))
            .args(["--port", "0", "--users"])
            .arg(users_file())
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        // Owned from here, so a failure below still kills the child.
        let mut server = Server { child, addr: SocketAddr::from(([0, 0, 0, 0], 0)) };

        // Read in a thread, so a server that never announces fails the test instead of hanging it;
        // the thread keeps draining stdout until the server exits.
        let (lines, line) = mpsc::channel();
        std::thread::spawn(move || {
            for text in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(text);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let text = line.recv_timeout(left).expect("the server prints `listening on HOST:PORT`");
            if let Some(addr) = text.strip_prefix("listening on ") {
                server.addr = addr.parse().expect("a socket address after `listening on`");
                return server;
            }
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        Endpoint::from_shared(self.url())
            .expect("a valid url")
            .connect()
            .await
            .expect("the server accepts a connection")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid fits pid_t");
        // SAFETY: kill(2) has no memory effects; the pid is our own child, not yet reaped.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
    }

    /// Waits up to `timeout` for the server to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("the child can be waited on") {
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
    }
}

/// What a raw HTTP/2 call got back.
#[derive(Debug)]
pub struct RawReply {
    pub http_status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub trailers: Option<HeaderMap>,
}

impl RawReply {
    /// grpc-status from the trailers, or from the headers of a trailers-only reply.
    pub fn grpc_status(&self) -> Option<i32> {
        let value =
            self.trailers.as_ref().and_then(|t| t.get("grpc-status")).or_else(|| self.headers.get("grpc-status"));
        value?.to_str().ok()?.parse().ok()
    }
}

/// One length-prefixed gRPC message (uncompressed).
pub fn grpc_frame(message: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(5 + message.len());
    frame.extend_from_slice(&[0]);
    frame.extend_from_slice(&u32::try_from(message.len()).expect("a message under 4 GiB").to_be_bytes());
    frame.extend_from_slice(message);
    frame.freeze()
}

/// POSTs `body` as is to `path` over a fresh HTTP/2 connection, with these headers
/// (`content-type` included: none is added).
pub async fn raw_call(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: Bytes) -> RawReply {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("the server accepts a connection");
    let (client, connection) = h2::client::handshake(tcp).await.expect("an HTTP/2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.expect("the connection is ready");
    let mut request =
        http::Request::builder().method("POST").uri(format!("http://{addr}{path}")).header("te", "trailers");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(()).expect("a valid request");
    let (response, mut send) = client.send_request(request, body.is_empty()).expect("the request is sent");
    if !body.is_empty() {
        // h2 buffers what flow control does not let through yet. The server may
        // answer before reading it all (and reset the stream): that is not an error here.
        let _ = send.send_data(body, true);
    }
    let response = response.await.expect("a response");
    let (parts, mut body) = response.into_parts();
    let mut data = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("the response body arrives");
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.expect("the trailers arrive");
    RawReply { http_status: parts.status.as_u16(), headers: parts.headers, body: data.freeze(), trailers }
}

/// A raw gRPC call with the usual headers.
pub async fn raw_grpc(addr: SocketAddr, path: &str, body: Bytes) -> RawReply {
    raw_call(addr, path, &[("content-type", "application/grpc")], body).await
}
