//! `--tls` and HTTP/2, checked against a REST server binary with curl and a rustls client.
//! Every REST server that takes `--tls` runs this suite through `rest_tls_tests!`.

use crate::server::Server;
use crate::tls::{self, TLS12, TLS13};
use serde_json::{json, Value};
use std::time::Duration;

const SHA512_ABC: &str = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f";
const JSON: &str = "Content-Type: application/json";

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// PUT /auth/9999 and POST /echo with these curl flags on `base` (`https://localhost:PORT`...):
/// both answer correctly over HTTP `version`.
fn auth_and_echo(flags: &[&str], base: &str, version: &str) {
    let url = format!("{base}/auth/9999");
    let mut args = flags.to_vec();
    args.extend(["-X", "PUT", "-H", JSON, "-d", r#"{"password":"abc"}"#, &url]);
    let (got_version, status, body) = tls::curl(&args);
    assert_eq!(
        (got_version.as_str(), status, json_of(&body)),
        (version, 200, json!({"hash": SHA512_ABC})),
        "{flags:?}"
    );

    // Every field set: a server may write default values out.
    let echo = json!({"records": [{"id": 7, "name": "r", "score": 0.5, "active": true, "kind": "KIND_LARGE",
                      "location": {"city": "c", "latitude": 1.5, "longitude": -2.5}, "tags": ["a"], "samples": [1, 2]}]});
    let (url, payload) = (format!("{base}/echo"), echo.to_string());
    let mut args = flags.to_vec();
    args.extend(["-H", JSON, "-d", &payload, &url]);
    let (got_version, status, body) = tls::curl(&args);
    assert_eq!((got_version.as_str(), status, json_of(&body)), (version, 200, echo), "{flags:?}");
}

pub fn tls_serves_http1_and_http2(bin: &str) {
    let server = Server::start(bin, &["--tls"]);
    let base = format!("https://localhost:{}", server.port());
    auth_and_echo(&["-k", "--http1.1"], &base, "1.1");
    auth_and_echo(&["-k", "--http2"], &base, "2");
    // TLS 1.2 only, too.
    auth_and_echo(&["-k", "--http2", "--tlsv1.2", "--tls-max", "1.2"], &base, "2");
}

pub fn tls_offers_tls12_and_tls13_with_alpn_h2_and_http1(bin: &str) {
    let server = Server::start(bin, &["--tls", "--workers", "2"]);
    for version in [&TLS12, &TLS13] {
        let h = tls::handshake(&server.addr, version, &[b"h2", b"http/1.1"]);
        assert_eq!((h.version, h.alpn.as_deref()), (version.version, Some(&b"h2"[..])));
        let h = tls::handshake(&server.addr, version, &[b"http/1.1"]);
        assert_eq!(h.alpn.as_deref(), Some(&b"http/1.1"[..]));
    }
}

pub fn tls_certificate_is_self_signed_for_localhost_with_a_fresh_key(bin: &str) {
    let dir = std::env::temp_dir().join(format!("callbench-testkit-tls-{}", std::process::id()));
    let mut fingerprints = Vec::new();
    for n in 0..2 {
        let server = Server::start(bin, &["--tls"]);
        let served = tls::handshake(&server.addr, &TLS13, &[b"h2", b"http/1.1"]);
        assert_eq!(served.chain_len, 1, "only the self-signed certificate");
        tls::assert_self_signed_for_localhost(&served.cert);
        let fingerprint = tls::fingerprint(&served.cert);
        assert_eq!(tls::fingerprint_in(&server.stderr_line("SHA-256 fingerprint")), fingerprint);
        // curl (OpenSSL) accepts it for localhost and 127.0.0.1 when it is the only trust anchor.
        let pem = tls::write_pem(&dir, &format!("served-{n}.pem"), &served.cert);
        let pem = pem.to_str().expect("a UTF-8 temp path");
        for host in ["localhost", "127.0.0.1"] {
            let (_, status, body) = tls::curl(&["--cacert", pem, &format!("https://{host}:{}/health", server.port())]);
            assert_eq!((status, json_of(&body)), (200, json!({"status": "SERVING"})), "{host}");
        }
        fingerprints.push(fingerprint);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(fingerprints[0], fingerprints[1], "a fresh key and certificate each start");
}

pub fn plaintext_serves_http2_with_prior_knowledge(bin: &str) {
    let server = Server::start(bin, &[]);
    let base = format!("http://{}", server.addr);
    auth_and_echo(&["--http2-prior-knowledge"], &base, "2");
    auth_and_echo(&["--http1.1"], &base, "1.1");
}

pub fn tls_stops_promptly_on_sigterm(bin: &str) {
    let server = Server::start(bin, &["--tls", "--workers", "2"]);
    // Neither a connection still before its handshake nor an idle TLS one may hold the stop.
    let silent = std::net::TcpStream::connect(&server.addr).expect("connect");
    let idle = tls::handshake(&server.addr, &TLS13, &[b"h2"]);
    let status = server.stop("TERM", Duration::from_secs(3)).expect("still running 3 s after SIGTERM");
    assert!(status.success(), "{status}");
    drop((silent, idle));
}
