//! A stock Prometheus (Debian's, installed by scripts/setup) on a loopback port, its data in a
//! directory of its own: the remote-write receiver and native histograms on, nothing scraped.
//! Queried through its HTTP API; killed when dropped.

use super::{free_port, installed, Guard, TempDir};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Prometheus {
    server: Guard,
    pub port: u16,
    pub dir: TempDir,
}

impl Prometheus {
    pub fn start() -> Prometheus {
        let bin = installed("/usr/bin/prometheus");
        let dir = TempDir::new("prometheus");
        std::fs::write(dir.path("prometheus.yml"), "global:\n  scrape_interval: 1h\n").unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path("prometheus.log")).unwrap();
        let server = Guard::spawn(
            Command::new(bin)
                .arg(format!("--config.file={}", dir.str("prometheus.yml")))
                .arg(format!("--storage.tsdb.path={}", dir.str("data")))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .args(["--web.enable-remote-write-receiver", "--enable-feature=native-histograms"])
                .stdout(Stdio::null())
                .stderr(log),
        );
        let mut prometheus = Prometheus { server, port, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while get(port, "/-/ready").is_none_or(|(status, _)| status != 200) {
            assert!(prometheus.server.alive(), "prometheus exited: {}", prometheus.log());
            assert!(Instant::now() < deadline, "prometheus not ready in 60 s: {}", prometheus.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        prometheus
    }

    /// The remote-write URL (no path: callbench adds Prometheus's /api/v1/write).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path("prometheus.log")).unwrap_or_default()
    }

    /// An instant query's result vector (now), each element's labels and value.
    pub fn query(&self, expr: &str) -> Vec<(Value, f64)> {
        let path = format!("/api/v1/query?query={}", percent_encoded(expr));
        let (status, body) = get(self.port, &path).unwrap_or_else(|| panic!("no answer to {expr}"));
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{expr}: {e}: {body}"));
        assert_eq!((status, answer["status"].as_str()), (200, Some("success")), "{expr}: {body}");
        let result = answer["data"]["result"].as_array().unwrap_or_else(|| panic!("{expr}: {body}"));
        result.iter().map(|r| (r["metric"].clone(), r["value"][1].as_str().unwrap().parse::<f64>().unwrap())).collect()
    }
}

/// A GET on loopback: the status and the body (Connection: close, so the body runs to the end).
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunked(body)
    } else {
        body.to_string()
    };
    Some((status, body))
}

fn dechunked(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
