//! A small blocking HTTP/1.1 client for the records suite: bodies sent whole or chunked in pieces
//! of any size, answers read by Content-Length, chunked or to the connection's end.

use callbench_testkit::server::Server;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Conn {
    reader: BufReader<TcpStream>,
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Whether the answer ends its connection.
    pub fn closes(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

impl Conn {
    pub fn open(server: &Server) -> Conn {
        let stream = TcpStream::connect(&server.addr).expect("the server accepts a connection");
        stream.set_read_timeout(Some(Duration::from_secs(60))).expect("a read timeout");
        Conn { reader: BufReader::new(stream) }
    }

    pub fn get(&mut self, path: &str) -> Reply {
        self.send(format!("GET {path} HTTP/1.1\r\nhost: test\r\n\r\n").as_bytes(), b"");
        self.read_reply()
    }

    /// An HTTP/1.0 GET: the answer is read to the connection's end.
    pub fn get_http_1_0(mut self, path: &str) -> Reply {
        self.send(format!("GET {path} HTTP/1.0\r\nhost: test\r\n\r\n").as_bytes(), b"");
        self.read_reply()
    }

    pub fn post(&mut self, path: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
        let head =
            format!("POST {path} HTTP/1.1\r\nhost: test\r\n{}content-length: {}\r\n\r\n", ct(content_type), body.len());
        self.send(head.as_bytes(), body);
        self.read_reply()
    }

    /// POSTs `body` chunked, one chunk per `size` bytes.
    pub fn post_chunked(&mut self, path: &str, content_type: Option<&str>, body: &[u8], size: usize) -> Reply {
        let head =
            format!("POST {path} HTTP/1.1\r\nhost: test\r\n{}transfer-encoding: chunked\r\n\r\n", ct(content_type));
        let mut chunked = Vec::with_capacity(body.len() + body.len() / size * 12 + 16);
        for chunk in body.chunks(size) {
            chunked.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
            chunked.extend(chunk);
            chunked.extend(b"\r\n");
        }
        chunked.extend(b"0\r\n\r\n");
        self.send(head.as_bytes(), &chunked);
        self.read_reply()
    }

    /// Sends from another thread, so a server that answers before reading everything (and closes)
    /// is read here, not stuck behind a full socket buffer.
    fn send(&mut self, head: &[u8], body: &[u8]) {
        let mut stream = self.reader.get_ref().try_clone().expect("a second handle");
        let request = [head, body].concat();
        let writer = std::thread::spawn(move || {
            let _ = stream.write_all(&request);
        });
        if body.len() < 1 << 20 {
            let _ = writer.join(); // small: sent before the answer is read, as a client would
        }
    }

    fn read_reply(&mut self) -> Reply {
        let status_line = self.line();
        let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok());
        let status = status.unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap_or_else(|| panic!("not a header: {line:?}"));
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let mut reply = Reply { status, headers, body: Vec::new() };
        if status == 100 {
            return self.read_reply();
        }
        if let Some(len) = reply.header("content-length") {
            let mut body = vec![0; len.parse().expect("a length")];
            self.reader.read_exact(&mut body).expect("the body");
            reply.body = body;
        } else if reply.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            loop {
                let size = usize::from_str_radix(self.line().split(';').next().unwrap_or("").trim(), 16)
                    .expect("a chunk size");
                let mut chunk = vec![0; size];
                self.reader.read_exact(&mut chunk).expect("a chunk");
                assert_eq!(self.line(), "", "a chunk ends with CRLF");
                if size == 0 {
                    break;
                }
                reply.body.extend(chunk);
            }
        } else {
            self.reader.read_to_end(&mut reply.body).expect("the body, to the connection's end");
        }
        reply
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a line of the answer");
        line.trim_end_matches(['\r', '\n']).to_string()
    }
}

fn ct(content_type: Option<&str>) -> String {
    content_type.map(|ct| format!("content-type: {ct}\r\n")).unwrap_or_default()
}
