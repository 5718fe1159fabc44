//! Raw HTTP/1.1 over one keep-alive connection, so every header is the test's own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// One keep-alive connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn new(stream: TcpStream) -> Conn {
        Conn { reader: BufReader::new(stream) }
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
