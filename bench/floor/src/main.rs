//! The floor under every protocol: round trips over TCP with nothing on top (no parsing, no
//! framing), from clients that differ only in how they talk to the kernel: epoll with one read and
//! one write per call, or io_uring with every connection's sends and receives submitted together.
//! Against `raw-echo` (servers/raw-echo) or, with `--request`, an HTTP/1.1 server; with `--http2` or
//! `--grpc`, an HTTP/2 or gRPC server spoken to with callbench's own frames and nothing else
//! (h2_client.rs); with `--http3`, an HTTP/3 server over quinn with nothing on top (h3_client.rs).
//! bench/engine.py runs them pinned and interleaved beside callbench and the peers.

mod buf_ring;
mod epoll_client;
mod h2_client;
mod h3_client;
mod outcome;
mod socket;
mod uring_client;

use callbench_engine::h2pool::request_block;
use clap::{Parser, Subcommand, ValueEnum};
use std::time::Duration;
use uring_client::Mode;

#[derive(Parser)]
#[command(about = "Raw TCP round trips: the kernel's own cost per call")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Ping-pong on `-c` connections for `-z` seconds after a warm-up; prints one JSON line
    Client {
        /// host:port of the server (loopback only): raw-echo, or an HTTP/1.1 server with --request
        addr: String,
        #[arg(long, value_enum, default_value = "epoll")]
        io: Io,
        #[arg(short = 'c', long, default_value_t = 50)]
        connections: usize,
        /// Seconds measured
        #[arg(short = 'z', long, default_value_t = 5.0)]
        seconds: f64,
        /// Seconds run before the measured window
        #[arg(long, default_value_t = 0.5)]
        warmup: f64,
        /// Bytes each way per call (with --request: the answer's size)
        #[arg(long, default_value_t = 64)]
        size: usize,
        /// Send these bytes as each call instead of `size` bytes (`\r\n` and `\n` are escapes):
        /// e.g. an HTTP/1.1 request, to pay a real server's pace with nothing on top
        #[arg(long)]
        request: Option<String>,
        /// Speak HTTP/2 (h2c, prior knowledge): GET this path, the frames callbench sends
        #[arg(long, value_name = "PATH", conflicts_with_all = ["request", "grpc"])]
        http2: Option<String>,
        /// Speak gRPC: call this method (`/package.Service/Method`) with an empty message
        #[arg(long, value_name = "METHOD", conflicts_with = "request")]
        grpc: Option<String>,
        /// Speak HTTP/3 (QUIC, any certificate): GET this path, one stream per call
        #[arg(long, value_name = "PATH", conflicts_with_all = ["request", "http2", "grpc"])]
        http3: Option<String>,
        /// HTTP/2, gRPC and HTTP/3: calls in flight on each connection
        #[arg(long, default_value_t = 1)]
        streams: usize,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum Io {
    /// epoll_wait, then read and write per call
    Epoll,
    /// io_uring: sends and receives of all connections in one io_uring_enter
    Uring,
    /// io_uring with SINGLE_ISSUER and DEFER_TASKRUN (completions run only when the client waits)
    UringDefer,
    /// io_uring, one multishot receive per connection into provided buffers
    UringMultishot,
    /// io_uring multishot receives with SINGLE_ISSUER and DEFER_TASKRUN
    UringMultishotDefer,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Client { addr, io, connections, seconds, warmup, size, request, http2, grpc, http3, streams } => {
            let request = request.map(|r| r.replace("\\r", "\r").replace("\\n", "\n").into_bytes());
            match (http2, grpc, http3) {
                (None, None, None) => client(&addr, io, connections, seconds, warmup, size, request),
                (None, None, Some(path)) => {
                    Streamed::new(&addr, io, connections, streams, seconds, warmup).and_then(|run| h3(run, &path))
                }
                (path, method, _) => Streamed::new(&addr, io, connections, streams, seconds, warmup)
                    .and_then(|run| h2(run, path, method)),
            }
        }
    };
    if let Err(e) = result {
        eprintln!("callbench-floor: {e}");
        std::process::exit(1);
    }
}

/// A run of calls on streams: `streams` calls in flight on each of `connections` (loopback), over
/// epoll (HTTP/2's sockets) or quinn's own socket (HTTP/3).
struct Streamed {
    addr: std::net::SocketAddr,
    io: Io,
    connections: usize,
    streams: usize,
    plan: outcome::Plan,
}

impl Streamed {
    fn new(addr: &str, io: Io, connections: usize, streams: usize, seconds: f64, warmup: f64) -> Result<Self, String> {
        let addr = loopback(addr)?;
        if io != Io::Epoll {
            return Err("HTTP/2, gRPC and HTTP/3 are measured over epoll only".into());
        }
        if connections == 0
            || streams == 0
            || streams > 100
            || !(seconds > 0.0 && seconds <= 600.0)
            || !(0.0..=60.0).contains(&warmup)
        {
            return Err(
                "connections at least 1, streams within [1, 100], seconds within (0, 600], warmup within [0, 60]"
                    .into(),
            );
        }
        let plan = outcome::Plan {
            warmup: Duration::from_secs_f64(warmup),
            measured: Duration::from_secs_f64(seconds),
            answer: 0,
            request: vec![],
        };
        Ok(Streamed { addr, io, connections, streams, plan })
    }
}

/// The HTTP/2 or gRPC floor.
fn h2(run: Streamed, path: Option<String>, method: Option<String>) -> Result<(), String> {
    let authority = run.addr.to_string();
    let call = match (path, method) {
        (Some(path), _) if path.starts_with('/') => {
            h2_client::Call::new(&request_block("GET", false, &authority, &path, &[]), &[])?
        }
        (_, Some(method)) if method.starts_with('/') => {
            // callbench's gRPC request headers (crates/engine/src/grpc.rs) and an empty message.
            let headers = [
                ("content-type".to_string(), "application/grpc".to_string()),
                ("te".to_string(), "trailers".to_string()),
                ("user-agent".to_string(), concat!("callbench/", env!("CARGO_PKG_VERSION")).to_string()),
            ];
            h2_client::Call::new(&request_block("POST", false, &authority, &method, &headers), &[0; 5])?
        }
        _ => return Err("--http2 takes a path and --grpc a method, both starting with /".into()),
    };
    let sockets = socket::connect_all(run.addr, run.connections)?;
    let result = h2_client::run(&sockets, run.streams, &call, &run.plan)?;
    println!("{}", result.to_json(run.io, run.connections, 0));
    Ok(())
}

/// The HTTP/3 floor, with callbench's QUIC set-up.
fn h3(run: Streamed, path: &str) -> Result<(), String> {
    use callbench_engine::h3pool::{H3Options, QuicClient};
    use callbench_engine::net::tls::{client_config, TlsOptions};
    if !path.starts_with('/') {
        return Err("--http3 takes a path starting with /".into());
    }
    let tls = client_config(&TlsOptions { insecure: true, ..TlsOptions::default() }, &[b"h3"])?;
    let config = QuicClient::new(tls, H3Options::default())?.quinn_config();
    let frame = h3_client::get_frame(&run.addr.to_string(), path);
    let result = h3_client::run(run.addr, run.connections, run.streams, frame, config, &run.plan)?;
    println!("{}", result.to_json(run.io, run.connections, 0));
    Ok(())
}

fn loopback(addr: &str) -> Result<std::net::SocketAddr, String> {
    let addr: std::net::SocketAddr = addr.parse().map_err(|e| format!("bad address {addr:?}: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err(format!("{addr} is not a loopback address: the floor is measured on this machine only"));
    }
    Ok(addr)
}

fn client(
    addr: &str,
    io: Io,
    connections: usize,
    seconds: f64,
    warmup: f64,
    size: usize,
    request: Option<Vec<u8>>,
) -> Result<(), String> {
    let addr = loopback(addr)?;
    if request.as_ref().is_some_and(|r| r.is_empty()) {
        return Err("--request must not be empty".into());
    }
    if connections == 0 || size == 0 || !(seconds > 0.0 && seconds <= 600.0) || !(0.0..=60.0).contains(&warmup) {
        return Err("connections and size must be at least 1, seconds within (0, 600], warmup within [0, 60]".into());
    }
    let plan = outcome::Plan {
        warmup: Duration::from_secs_f64(warmup),
        measured: Duration::from_secs_f64(seconds),
        answer: size,
        request: request.unwrap_or_else(|| vec![b'x'; size]),
    };
    let streams = socket::connect_all(addr, connections)?;
    let result = match io {
        Io::Epoll => epoll_client::run(&streams, &plan)?,
        Io::Uring => uring_client::run(&streams, &plan, Mode { defer: false, multishot: false })?,
        Io::UringDefer => uring_client::run(&streams, &plan, Mode { defer: true, multishot: false })?,
        Io::UringMultishot => uring_client::run(&streams, &plan, Mode { defer: false, multishot: true })?,
        Io::UringMultishotDefer => uring_client::run(&streams, &plan, Mode { defer: true, multishot: true })?,
    };
    println!("{}", result.to_json(io, connections, size));
    Ok(())
}
