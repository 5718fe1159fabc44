//! `--tls`: grpcurl (Go's TLS) and a rustls client against the real binary: the services over TLS,
//! ALPN h2 on TLS 1.2 and 1.3, the self-signed certificate for localhost, a clean stop.

use callbench_testkit::server::Server;
use callbench_testkit::tls::{self, TLS12, TLS13};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rust-tonic");

/// grpcurl with a 10 s limit; panics unless it succeeds. Returns its stdout.
fn grpcurl(args: &[&str]) -> String {
    let mut all = vec!["-max-time", "10"];
    all.extend_from_slice(args);
    let out = tls::run("grpcurl", &all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "grpcurl {args:?}: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn grpcurl_lists_and_calls_over_tls() {
    let server = Server::start(BIN, &["--tls"]);
    let services = grpcurl(&["-insecure", &server.addr, "list"]);
    for service in ["callbench.v1.Auth", "callbench.v1.Echo", "grpc.health.v1.Health"] {
        assert!(services.lines().any(|l| l == service), "{service} not in {services}");
    }
    let reply =
        grpcurl(&["-insecure", "-d", r#"{"id": 9999, "password": "abc"}"#, &server.addr, "callbench.v1.Auth/Test"]);
    assert_eq!(
        json(&reply)["hash"],
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
    );
    let reply = grpcurl(&["-insecure", &server.addr, "grpc.health.v1.Health/Check"]);
    assert_eq!(json(&reply)["status"], "SERVING");
}

#[test]
fn tls12_and_tls13_with_alpn_h2() {
    let server = Server::start(BIN, &["--tls"]);
    for version in [&TLS12, &TLS13] {
        let h = tls::handshake(&server.addr, version, &[b"h2"]);
        assert_eq!((h.version, h.alpn.as_deref()), (version.version, Some(&b"h2"[..])));
    }
}

#[test]
fn the_certificate_is_self_signed_for_localhost() {
    let server = Server::start(BIN, &["--tls"]);
    let served = tls::handshake(&server.addr, &TLS13, &[b"h2"]);
    assert_eq!(served.chain_len, 1, "only the self-signed certificate");
    tls::assert_self_signed_for_localhost(&served.cert);
    assert_eq!(tls::fingerprint_in(&server.stderr_line("SHA-256 fingerprint")), tls::fingerprint(&served.cert));
    // grpcurl (Go's crypto/x509) accepts it for localhost when it is the only trust anchor.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rust-tonic-tls-{}", std::process::id()));
    let pem = tls::write_pem(&dir, "served.pem", &served.cert);
    let services = grpcurl(&["-cacert", pem.to_str().expect("UTF-8"), &format!("localhost:{}", server.port()), "list"]);
    assert!(services.contains("callbench.v1.Students"), "{services}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stops_promptly_on_sigterm_with_tls() {
    let server = Server::start(BIN, &["--tls", "--workers", "2"]);
    // Neither a connection still before its handshake nor an idle TLS one may hold the stop.
    let silent = std::net::TcpStream::connect(&server.addr).expect("connect");
    let idle = tls::handshake(&server.addr, &TLS13, &[b"h2"]);
    let status = server.stop("TERM", Duration::from_secs(3)).expect("still running 3 s after SIGTERM");
    assert!(status.success(), "{status}");
    drop((silent, idle));
}
