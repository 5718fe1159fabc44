//! A stock Prometheus (Debian's, installed by scripts/setup) on a loopback port, its data in a
//! directory of its own: the remote-write receiver and native histograms on, nothing scraped.
//! Queried through its HTTP API with the tests' one HTTP/1.1 client (callbench_testkit::http1);
//! killed when dropped.

use super::{free_port, installed, wait_listening, Guard, TempDir};
use callbench_testkit::http1::Conn;
use serde_json::Value;
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
        let address = format!("127.0.0.1:{port}");
        assert!(wait_listening(&address, Duration::from_secs(60)), "prometheus not listening: {}", prometheus.log());
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut conn = Conn::connect(address.parse().unwrap());
        // Listening comes before ready (the TSDB opens in between): 503 until then.
        while conn.call("GET", "/-/ready", None, b"").status != 200 {
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
        let reply = Conn::connect(format!("127.0.0.1:{}", self.port).parse().unwrap()).call("GET", &path, None, b"");
        let (status, body) = (reply.status, String::from_utf8_lossy(&reply.body).into_owned());
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{expr}: {e}: {body}"));
        assert_eq!((status, answer["status"].as_str()), (200, Some("success")), "{expr}: {body}");
        let result = answer["data"]["result"].as_array().unwrap_or_else(|| panic!("{expr}: {body}"));
        result.iter().map(|r| (r["metric"].clone(), r["value"][1].as_str().unwrap().parse::<f64>().unwrap())).collect()
    }
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
