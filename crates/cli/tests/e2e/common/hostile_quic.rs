//! A hostile HTTP/3 server, scripted per test: quinn on 127.0.0.1 with a self-signed certificate,
//! HTTP/3 written by hand as frame bytes, so that a test sends exactly what it means to, broken
//! or not. Each accepted connection goes to the test's behaviour as a task; behaviours count the
//! good answers they send (before sending: the count is never behind the client's). How each
//! connection ended is kept: a test can ask whether the client closed every one itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How the server's QUIC and TLS are set up.
#[derive(Clone, Copy, Default)]
pub struct Settings {
    /// From the second connection on, the client may open no unidirectional stream: HTTP/3's
    /// set-up (the client's control stream first) never finishes.
    pub starve_after_first: bool,
    /// A fresh TLS configuration, so a fresh ticket store, for every connection: the tickets
    /// of the one before are refused, and with them 0-RTT.
    pub forget_tickets: bool,
}

type Behaviour = dyn Fn(QuicConn) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync;

pub struct HostileQuic {
    pub port: u16,
    good: Arc<AtomicU64>,
    accepted: Arc<AtomicUsize>,
    /// How each connection ended (by its index), as quinn says it; told on each.
    ended: Arc<Endings>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// One accepted connection, as a behaviour sees it.
pub struct QuicConn {
    pub quic: quinn::Connection,
    pub index: usize,
    good: Arc<AtomicU64>,
}

/// A server configuration with a new certificate and ticket store; `client_uni_streams`: how many
/// unidirectional streams the client may open (HTTP/3 needs three).
fn server_config(client_uni_streams: u32) -> quinn::ServerConfig {
    let cert = callbench_serverkit::tls::SelfSigned::generate().expect("a certificate");
    let mut tls = cert.server_config(&[b"h3"]).expect("a TLS configuration");
    tls.max_early_data_size = u32::MAX; // 0-RTT, as quinn asks it to be said
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).expect("TLS 1.3 for QUIC");
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport
        .max_concurrent_uni_streams(client_uni_streams.into())
        // A connection the client leaves open stays open (PINGs) until 5 s after it goes quiet.
        .keep_alive_interval(Some(Duration::from_millis(300)))
        .max_idle_timeout(Some(Duration::from_secs(5).try_into().unwrap()));
    config.transport_config(Arc::new(transport));
    config
}

impl HostileQuic {
    pub fn start<F>(settings: Settings, behaviour: impl Fn(QuicConn) -> F + Send + Sync + 'static) -> HostileQuic
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let behaviour: Arc<Behaviour> = Arc::new(move |conn| Box::pin(behaviour(conn)));
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let endpoint = runtime.block_on(async {
            quinn::Endpoint::server(server_config(100), "127.0.0.1:0".parse().unwrap()).expect("a UDP socket")
        });
        let port = endpoint.local_addr().unwrap().port();
        let (good, accepted, ended) =
            (Arc::new(AtomicU64::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(Endings::default()));
        let (counted, taken, endings) = (good.clone(), accepted.clone(), ended.clone());
        runtime.spawn(async move {
            while let Some(incoming) = endpoint.accept().await {
                let index = taken.fetch_add(1, Ordering::Relaxed);
                let streams = if settings.starve_after_first && index >= 1 { 0 } else { 100 };
                let accepted = match settings.forget_tickets || streams == 0 {
                    true => incoming.accept_with(Arc::new(server_config(streams))),
                    false => incoming.accept(),
                };
                let (behaviour, good, endings) = (behaviour.clone(), counted.clone(), endings.clone());
                tokio::spawn(async move {
                    let connecting = async { accepted?.await };
                    let quic = match connecting.await {
                        Ok(quic) => quic,
                        Err(e) => return endings.record(index, e),
                    };
                    let watched = quic.clone();
                    tokio::spawn(async move {
                        let ended = watched.closed().await;
                        endings.record(index, ended);
                    });
                    behaviour(QuicConn { quic, index, good }).await;
                });
            }
        });
        HostileQuic { port, good, accepted, ended, runtime: Some(runtime) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Good answers the behaviours sent.
    pub fn good(&self) -> u64 {
        self.good.load(Ordering::Relaxed)
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }

    /// How every accepted connection ended, once each has (panics after `limit`).
    pub fn wait_ended(&self, limit: Duration) -> Vec<(usize, quinn::ConnectionError)> {
        let all = self.ended.list.lock().unwrap();
        let (all, _) = self.ended.told.wait_timeout_while(all, limit, |all| all.len() < self.accepted()).unwrap();
        assert!(all.len() >= self.accepted(), "{} of {} connections ended in {limit:?}", all.len(), self.accepted());
        all.clone()
    }
}

/// How the connections ended, and a condition told on each ending.
#[derive(Default)]
struct Endings {
    list: Mutex<Vec<(usize, quinn::ConnectionError)>>,
    told: Condvar,
}

impl Endings {
    fn record(&self, index: usize, ended: quinn::ConnectionError) {
        self.list.lock().unwrap().push((index, ended));
        self.told.notify_all();
    }
}

impl Drop for HostileQuic {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

/// A QUIC varint.
pub fn varint(v: u64) -> Vec<u8> {
    match v {
        0..=0x3f => vec![v as u8],
        0x40..=0x3fff => ((v as u16) | 0x4000).to_be_bytes().to_vec(),
        0x4000..=0x3fff_ffff => ((v as u32) | 0x8000_0000).to_be_bytes().to_vec(),
        _ => (v | 0xc000_0000_0000_0000).to_be_bytes().to_vec(),
    }
}

/// A frame's head: type and length.
pub fn frame_head(ty: u64, length: u64) -> Vec<u8> {
    [varint(ty), varint(length)].concat()
}

pub fn frame(ty: u64, payload: &[u8]) -> Vec<u8> {
    [frame_head(ty, payload.len() as u64), payload.to_vec()].concat()
}

pub const DATA: u64 = 0x0;
pub const HEADERS: u64 = 0x1;
pub const SETTINGS: u64 = 0x4;
pub const GOAWAY: u64 = 0x7;
/// A reserved frame type (0x1f * N + 0x21): to be ignored, whatever its length.
pub const RESERVED: u64 = 0x1f * 3 + 0x21;

/// A HEADERS frame of `:status` (from QPACK's static table: 24 is 103, 25 is 200) and, when
/// given, `content-length` (a literal with the static name 4), no dynamic table.
pub fn headers(status_index: u8, content_length: Option<usize>) -> Vec<u8> {
    let mut block = vec![0x00, 0x00, 0xc0 | status_index];
    if let Some(length) = content_length {
        let value = length.to_string();
        block.extend([0x54, value.len() as u8]);
        block.extend(value.as_bytes());
    }
    frame(HEADERS, &block)
}

pub const STATUS_103: u8 = 24;
pub const STATUS_200: u8 = 25;

/// A good answer: 200, its content-length and its body in one DATA frame.
pub fn good_answer(body: &[u8]) -> Vec<u8> {
    [headers(STATUS_200, Some(body.len())), frame(DATA, body)].concat()
}

impl QuicConn {
    /// Opens the server's control stream with an empty SETTINGS frame, then `more`.
    pub async fn control(&self, more: &[u8]) -> Option<quinn::SendStream> {
        let mut control = self.quic.open_uni().await.ok()?;
        control.write_all(&[[0x00].as_slice(), &frame(SETTINGS, &[]), more].concat()).await.ok()?;
        Some(control)
    }

    /// The next request stream, its request read to the end (at most 64 KiB kept); None once the
    /// connection is gone.
    pub async fn request(&self) -> Option<(quinn::SendStream, quinn::RecvStream)> {
        let (send, mut recv) = self.quic.accept_bi().await.ok()?;
        let _ = recv.read_to_end(64 << 10).await;
        Some((send, recv))
    }

    /// Sends `answer` and ends the stream, counted good first.
    pub async fn answer_good(&self, send: &mut quinn::SendStream, answer: &[u8]) -> bool {
        self.good.fetch_add(1, Ordering::Relaxed);
        let sent = send.write_all(answer).await.is_ok() && send.finish().is_ok();
        if !sent {
            self.good.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Writes `chunk` to `stream` over and over until the client stops it or the connection ends,
    /// at most `limit` bytes in all.
    pub async fn flood(stream: &mut quinn::SendStream, chunk: &[u8], limit: u64) {
        let mut sent = 0;
        while sent < limit && stream.write_all(chunk).await.is_ok() {
            sent += chunk.len() as u64;
        }
    }
}
