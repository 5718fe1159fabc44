//! Checks for `--tls`: what a server really serves (certificate, TLS versions, ALPN), seen by a
//! rustls client of our own, and the command-line clients (curl, grpcurl) the tests also use.

use base64::Engine;
use callbench_engine::net::tls::AnyCertificate;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ProtocolVersion, SupportedProtocolVersion};
use sha2::{Digest, Sha256};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

pub use rustls::version::{TLS12, TLS13};

/// The names every `--tls` certificate must be valid for.
pub const NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// What one TLS handshake got.
pub struct Handshake {
    /// The server's certificate (DER).
    pub cert: Vec<u8>,
    /// Any further certificates it sent (a self-signed server sends none).
    pub chain_len: usize,
    pub alpn: Option<Vec<u8>>,
    pub version: ProtocolVersion,
    /// The open connection, for tests that keep one idle.
    pub stream: TcpStream,
}

/// A TLS handshake with `addr` (SNI `localhost`) allowing only `version` and offering `alpn`;
/// any certificate is accepted (the handshake signatures are still checked) and returned.
pub fn handshake(addr: &str, version: &'static SupportedProtocolVersion, alpn: &[&[u8]]) -> Handshake {
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[version])
        .expect("a valid TLS version")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate::new(provider())))
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let name = ServerName::try_from("localhost").expect("a server name");
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).expect("a TLS client");
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("read timeout");
    while conn.is_handshaking() {
        conn.complete_io(&mut stream).unwrap_or_else(|e| panic!("TLS handshake with {addr} ({version:?}): {e}"));
    }
    let certs = conn.peer_certificates().expect("the server sent a certificate");
    Handshake {
        cert: certs[0].to_vec(),
        chain_len: certs.len(),
        alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
        version: conn.protocol_version().expect("a negotiated version"),
        stream,
    }
}

/// Panics unless `cert` is self-signed and valid for every name of [`NAMES`] (and no other):
/// a verifier whose only trust anchor is the certificate itself accepts it for them.
pub fn assert_self_signed_for_localhost(cert: &[u8]) {
    let cert = CertificateDer::from(cert.to_vec());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).expect("the certificate parses");
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .expect("a verifier");
    for name in NAMES {
        let server_name = ServerName::try_from(name).expect("a server name");
        verifier
            .verify_server_cert(&cert, &[], &server_name, &[], UnixTime::now())
            .unwrap_or_else(|e| panic!("the certificate, as its own root, is not valid for {name}: {e}"));
    }
    let other = ServerName::try_from("example.com").expect("a server name");
    assert!(verifier.verify_server_cert(&cert, &[], &other, &[], UnixTime::now()).is_err(), "valid for example.com");
}

/// SHA-256 of a DER certificate as the servers print it (and `openssl x509 -fingerprint -sha256`): `AB:12:...`.
pub fn fingerprint(cert: &[u8]) -> String {
    Sha256::digest(cert).iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
}

/// The fingerprint in a server's `... SHA-256 fingerprint AB:12:...` stderr line.
pub fn fingerprint_in(line: &str) -> String {
    let (_, after) = line.split_once("SHA-256 fingerprint ").unwrap_or_else(|| panic!("no fingerprint in {line:?}"));
    after.split_whitespace().next().unwrap_or_default().to_string()
}

/// Writes a DER certificate as a PEM file `dir/name` (for `curl --cacert`, `grpcurl -cacert`).
pub fn write_pem(dir: &Path, name: &str, cert: &[u8]) -> PathBuf {
    let b64 = base64::engine::general_purpose::STANDARD.encode(cert);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    std::fs::create_dir_all(dir).expect("create the folder");
    let path = dir.join(name);
    std::fs::write(&path, pem).expect("write the PEM file");
    path
}

/// A client tool from PATH or Go's bin folder (grpcurl: `scripts/setup` installs it).
pub fn tool(name: &str) -> String {
    let go_bin = std::env::var("HOME").map(|h| format!("{h}/go/bin/{name}")).unwrap_or_default();
    if Command::new(name).arg("--version").output().is_ok() {
        name.to_string()
    } else if Path::new(&go_bin).exists() {
        go_bin
    } else {
        panic!("{name} is not installed: run scripts/setup");
    }
}

/// Runs `name args...` to its end (give curl and grpcurl a time limit of their own).
pub fn run(name: &str, args: &[&str]) -> Output {
    Command::new(tool(name)).args(args).output().unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// What `curl -sS ... -w '\n%{http_version} %{http_code}'` got: (HTTP version, status, body).
pub fn curl(args: &[&str]) -> (String, u16, String) {
    let mut all = vec!["-sS", "--max-time", "10", "-w", "\n%{http_version} %{http_code}"];
    all.extend_from_slice(args);
    let out = run("curl", &all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "curl {args:?}: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    let (body, last) = stdout.rsplit_once('\n').unwrap_or(("", &stdout));
    let (version, status) = last.split_once(' ').unwrap_or_else(|| panic!("curl wrote {stdout:?}"));
    (version.to_string(), status.parse().unwrap_or_else(|_| panic!("curl wrote {stdout:?}")), body.to_string())
}
