//! A hostile server, scripted per test: it accepts connections on 127.0.0.1 and hands each one,
//! with its index, to the test's behaviour on a thread of its own. Behaviours count the good
//! answers they send (before sending, so the count is never behind the client's), and see when
//! the test is over (every read waits at most 100 ms, so no thread outlives its test for long).
//! Also: `callbench load` run with the peak memory it reports of itself.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Hostile {
    pub port: u16,
    stop: Arc<AtomicBool>,
    good: Arc<AtomicU64>,
    accept: Option<JoinHandle<()>>,
}

/// One accepted connection, as a behaviour sees it.
pub struct Conn {
    pub tcp: TcpStream,
    pub index: usize,
    stop: Arc<AtomicBool>,
    good: Arc<AtomicU64>,
    /// Bytes read and not yet consumed as a request.
    pending: Vec<u8>,
}

impl Hostile {
    pub fn start(behaviour: impl Fn(Conn) + Send + Sync + 'static) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let (stop, good) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
        let behaviour = Arc::new(behaviour);
        let accepted = AtomicUsize::new(0);
        let (stop_accepting, counted) = (stop.clone(), good.clone());
        let accept = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if stop_accepting.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(tcp) = tcp else { continue };
                tcp.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
                tcp.set_nodelay(true).unwrap(); // small answers go out at once, as servers send them
                let index = accepted.fetch_add(1, Ordering::Relaxed);
                let conn = Conn { tcp, index, stop: stop_accepting.clone(), good: counted.clone(), pending: vec![] };
                let behaviour = behaviour.clone();
                std::thread::spawn(move || behaviour(conn));
            }
        });
        Hostile { port, stop, good, accept: Some(accept) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Good answers the behaviours sent.
    pub fn good(&self) -> u64 {
        self.good.load(Ordering::Relaxed)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port)); // wakes the accept loop
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Conn {
    /// Whether the test is over.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Reads into `buf`; None when the client closed, the connection failed or the test ended.
    pub fn read_some(&mut self, buf: &mut [u8]) -> Option<usize> {
        loop {
            if self.stopped() {
                return None;
            }
            match self.tcp.read(buf) {
                Ok(0) => return None,
                Ok(n) => return Some(n),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
    }

    /// Reads exactly `n` bytes (the rest of what came is kept for the next read).
    pub fn read_exact_bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        let mut buf = [0u8; 16 * 1024];
        while self.pending.len() < n {
            let got = self.read_some(&mut buf)?;
            self.pending.extend_from_slice(&buf[..got]);
        }
        Some(self.pending.drain(..n).collect())
    }

    /// One HTTP/1.1 request: its head and its Content-Length body. None at the end.
    pub fn read_request(&mut self) -> Option<Vec<u8>> {
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some(end) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.pending[..end]).to_ascii_lowercase();
                let body = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                let whole = end + 4 + body;
                while self.pending.len() < whole {
                    let got = self.read_some(&mut buf)?;
                    self.pending.extend_from_slice(&buf[..got]);
                }
                return Some(self.pending.drain(..whole).collect());
            }
            let got = self.read_some(&mut buf)?;
            self.pending.extend_from_slice(&buf[..got]);
        }
    }

    /// Writes all of `bytes`; false when the client is gone.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        !self.stopped() && self.tcp.write_all(bytes).is_ok()
    }

    /// Sends a good answer, counted first: the client cannot have it before the count does.
    pub fn write_good(&mut self, bytes: &[u8]) -> bool {
        self.good.fetch_add(1, Ordering::Relaxed);
        let sent = self.write(bytes);
        if !sent {
            self.good.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Keeps the connection open, reading and dropping whatever comes, until the client or the
    /// test ends it.
    pub fn hold(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        while self.read_some(&mut buf).is_some() {}
    }
}

/// What one measured `callbench load` did, and the most memory it held.
pub struct Measured {
    pub run: super::Run,
    pub report: serde_json::Value,
    pub peak_rss_kib: u64,
}

/// `callbench load -o json -q ARGS` (killed after `super::RUN_LIMIT`), with the peak memory the
/// run reports of itself (VmHWM: from its exec on; wait4's maxrss would count the test process
/// it was forked from).
pub fn measured_load(args: &[&str]) -> Measured {
    let mut all = vec!["-o", "json", "-q"];
    all.extend_from_slice(args);
    let run = super::load(&all);
    let report: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", run.all()));
    super::validate(&report);
    let peak_rss_kib = report["client_rss_peak_kib"].as_u64().expect("Linux reports VmHWM");
    Measured { run, report, peak_rss_kib }
}

/// Duration (1 s) + one call timeout (1 s: calls in flight at the end finish or time out) + 3 s
/// to start and exit: what every run against a hostile server must end within.
pub const TIME_BOUND: Duration = Duration::from_secs(5);

/// `callbench load ARGS` against `server`: it must exit 0 within `TIME_BOUND`, peak under
/// `memory_bound_kib`, and count ok exactly the good answers the server sent (some).
pub fn checked_load(server: &Hostile, args: &[&str], memory_bound_kib: u64) -> Measured {
    let before = server.good();
    let m = measured_load(args);
    assert_eq!(m.run.code, Some(0), "{}", m.run.all());
    assert!(m.run.elapsed < TIME_BOUND, "ran {:?}:\n{}", m.run.elapsed, m.run.all());
    assert!(m.peak_rss_kib < memory_bound_kib, "peak RSS {} KiB:\n{}", m.peak_rss_kib, m.run.all());
    let ok = m.report["calls"]["ok"].as_u64().unwrap();
    assert_eq!(ok, server.good() - before, "every good answer is counted ok, and nothing else: {:#}", m.report);
    assert!(ok > 0, "the good connections were served: {:#}", m.report);
    m
}

/// The failures were all of `kind`, and there were some.
pub fn assert_failed_as(m: &Measured, kind: &str) {
    let errors = m.report["errors"].as_object().unwrap();
    assert!(errors.keys().all(|k| k == kind), "only {kind}: {:#}", m.report);
    assert!(m.report["calls"]["errors"].as_u64().unwrap() > 0, "{:#}", m.report);
}

/// 1 GiB of zeros, gzip-compressed: about 1 MiB (made once per test binary).
pub fn gzip_bomb() -> &'static [u8] {
    static BOMB: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BOMB.get_or_init(|| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..1024 {
            encoder.write_all(&zeros).unwrap();
        }
        encoder.finish().unwrap()
    })
}
