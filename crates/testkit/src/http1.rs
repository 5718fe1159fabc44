//! HTTP/1.1 for the servers' tests over one keep-alive connection, every header the test's own:
//! `callbench verify`'s client (crates/verify/src/http1.rs), the one HTTP/1.1 client callbench
//! tests servers with, behind a blocking face for `#[test]` functions.

use bytes::Bytes;
use callbench_verify::http1::Http1Conn;
use std::net::SocketAddr;

/// One keep-alive connection.
pub struct Conn {
    runtime: tokio::runtime::Runtime,
    conn: Http1Conn,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> Conn {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let conn = runtime.block_on(Http1Conn::connect(addr)).unwrap_or_else(|e| panic!("connect to {addr}: {e:#}"));
        Conn { runtime, conn }
    }
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
        let mut headers: Vec<(String, String)> =
            content_type.map(|ct| ("content-type".to_string(), ct.to_string())).into_iter().collect();
        // An empty PUT or POST still says its length, as a client with a body to send does.
        if body.is_empty() && matches!(method, "PUT" | "POST") {
            headers.push(("content-length".into(), "0".into()));
        }
        let body = Bytes::copy_from_slice(body);
        let reply = self
            .runtime
            .block_on(self.conn.send(method, path, &headers, body))
            .unwrap_or_else(|e| panic!("{method} {path}: {e:#}"));
        let headers = reply
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        Response { status: reply.status, headers, body: reply.body.to_vec() }
    }
}

/// A JSON body of exactly `size` bytes: `prefix`, spaces, `suffix`.
pub fn padded_json(prefix: &str, suffix: &str, size: usize) -> Vec<u8> {
    let mut body = prefix.as_bytes().to_vec();
    body.resize(size - suffix.len(), b' ');
    body.extend_from_slice(suffix.as_bytes());
    body
}
