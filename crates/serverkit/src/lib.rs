//! The flags and start-up steps every Rust reference server shares, so each
//! server's own code is only its framework's routing and handlers.

pub mod answered;
mod fail;
pub mod records;
pub mod stall;
pub mod tls;

pub use fail::fail;

use callbench_workloads::auth::{Mode, UserStore};
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The flags of the contract's "Serving" section (contract/README.md).
#[derive(Debug, Clone, Parser)]
pub struct ServeArgs {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Threads that serve calls (give it the cores it is pinned to).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub workers: u16,
    /// How auth finds users: preloaded (parsed once) or per-request (read and parsed every call, as seed 000).
    #[arg(long, default_value = "preloaded")]
    pub mode: Mode,
    /// The users file written by `callbench gen-users`.
    #[arg(long, default_value = "users.json")]
    pub users: PathBuf,
    /// Serve TLS (1.2 and 1.3) with a self-signed certificate for localhost made at start; its SHA-256
    /// fingerprint goes to stderr.
    #[arg(long)]
    pub tls: bool,
}

impl ServeArgs {
    /// Parses the flags; exits with a one-line message on bad ones.
    pub fn from_env() -> Self {
        ServeArgs::parse()
    }

    /// Opens the users file in the chosen mode, or exits with a one-line message.
    pub fn open_users(&self) -> UserStore {
        UserStore::open(&self.users, self.mode).unwrap_or_else(|e| {
            eprintln!(
                "error: cannot read users file {}: {e} (write it with `callbench gen-users`)",
                self.users.display()
            );
            std::process::exit(2)
        })
    }

    /// `host:port`, with brackets around an IPv6 host.
    pub fn bind_addr(&self) -> String {
        match self.host.contains(':') {
            true => format!("[{}]:{}", self.host, self.port),
            false => format!("{}:{}", self.host, self.port),
        }
    }

    /// With `--tls`: a fresh self-signed certificate (its fingerprint printed on stderr).
    pub fn certificate(&self) -> Option<tls::SelfSigned> {
        self.tls.then(tls::self_signed)
    }

    /// A tokio runtime with exactly `workers` threads.
    pub fn runtime(&self) -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.workers as usize)
            .enable_all()
            .build()
            .unwrap_or_else(|e| fail(format!("cannot start the runtime: {e}")))
    }
}

/// Binds a std listener (so the port is known before serving), or exits with a one-line message.
pub fn bind(args: &ServeArgs) -> std::net::TcpListener {
    // callbench's settings from the environment, read (and a bad one refused) before serving.
    answered::init();
    stall::init();
    let listener = std::net::TcpListener::bind((args.host.as_str(), args.port))
        .unwrap_or_else(|e| fail(format!("cannot listen on {}: {e}", args.bind_addr())));
    listener.set_nonblocking(true).unwrap_or_else(|e| fail(format!("cannot set the listener non-blocking: {e}")));
    listener
}

/// The line the harness waits for: `listening on HOST:PORT`.
pub fn announce(addr: SocketAddr) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on {addr}");
    let _ = out.flush();
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).unwrap_or_else(|e| fail(format!("cannot watch SIGTERM: {e}")));
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
