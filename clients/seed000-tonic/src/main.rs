//! Seed 000's gRPC client as the article wrote it: each timed call builds a tonic `Channel` with a
//! `ClientTlsConfig` naming the server, connects it (name lookup, TCP, TLS, HTTP/2 preface), makes
//! one `Test` call and drops the channel, so every call pays what the article's `main` paid. The
//! article's client trusted the platform's roots for Cloud Run's certificate; this one trusts the
//! certificate the reference server made (`--ca`), checked the same way.
//!
//! Prints one JSON line per call: `{"us": …, "ok": true}` or `{"us": …, "ok": false, "error": "…"}`.

use callbench_contract::pb::{auth_client::AuthClient, AuthRequest};
use clap::Parser;
use std::time::{Duration, Instant};
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

#[derive(Parser)]
#[command(about = "Seed 000's tonic client: a new TLS channel per call, as the article timed it")]
struct Args {
    /// The server, e.g. https://server.callbench.test:50051 (http:// for no TLS; grpcs:// and grpc://,
    /// as `callbench serve` gives them, are the same).
    #[arg(value_parser = http_url)]
    url: String,
    /// PEM file of the certificate authority to trust (the server's self-signed certificate).
    #[arg(long)]
    ca: Option<std::path::PathBuf>,
    /// The name the certificate is checked against (default: the URL's host).
    #[arg(long)]
    domain: Option<String>,
    #[arg(long, default_value_t = 9999)]
    id: i64,
    #[arg(long, default_value = "thisispassword")]
    password: String,
    /// Stop making calls after this long.
    #[arg(long, default_value_t = 10_000)]
    duration_ms: u64,
    /// Stop after this many calls.
    #[arg(long)]
    calls: Option<u64>,
}

fn http_url(url: &str) -> Result<String, String> {
    let url = match url.split_once("://") {
        Some(("grpcs", rest)) => format!("https://{rest}"),
        Some(("grpc", rest)) => format!("http://{rest}"),
        Some(("https" | "http", _)) => url.to_string(),
        _ => return Err(format!("{url:?} is not an http(s):// or grpc(s):// URL")),
    };
    Ok(url)
}

/// The article's `get_grpc_channel` and `main`, timed together.
async fn call(args: &Args, tls: Option<&ClientTlsConfig>) -> Result<(), String> {
    let mut endpoint = Channel::from_shared(args.url.clone()).map_err(|e| e.to_string())?;
    if let Some(tls) = tls {
        endpoint = endpoint.tls_config(tls.clone()).map_err(|e| e.to_string())?;
    }
    let channel = endpoint.connect().await.map_err(|e| format!("connect: {e:?}"))?;
    let mut client = AuthClient::new(channel);
    let request = AuthRequest { id: args.id, password: args.password.clone() };
    client.test(request).await.map(|_| ()).map_err(|s| format!("{:?}: {}", s.code(), s.message()))
}

fn tls_config(args: &Args) -> Result<Option<ClientTlsConfig>, String> {
    if !args.url.starts_with("https://") {
        return Ok(None);
    }
    let host = args.url["https://".len()..].split(['/', ':']).next().unwrap_or_default().to_string();
    let mut tls = ClientTlsConfig::new().domain_name(args.domain.clone().unwrap_or(host));
    if let Some(path) = &args.ca {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    Ok(Some(tls))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let tls = tls_config(&args).unwrap_or_else(|e| {
        eprintln!("seed000-tonic: {e}");
        std::process::exit(2)
    });
    let end = Instant::now() + Duration::from_millis(args.duration_ms);
    let mut made = 0u64;
    while Instant::now() < end && args.calls.is_none_or(|n| made < n) {
        let start = Instant::now();
        let outcome = call(&args, tls.as_ref()).await;
        let us = start.elapsed().as_secs_f64() * 1e6;
        let line = match outcome {
            Ok(()) => serde_json::json!({ "us": us, "ok": true }),
            Err(e) => serde_json::json!({ "us": us, "ok": false, "error": e.chars().take(200).collect::<String>() }),
        };
        println!("{line}");
        made += 1;
    }
}
