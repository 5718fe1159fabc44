//! End-to-end: `callbench load` over TLS against the reference servers' `--tls` (a self-signed
//! certificate): `-k` accepts it, without `-k` it is a one-line refusal; TLS costs wire bytes. A
//! stock nginx's self-signed certificate as `openssl req -x509` makes it, given in `--cacert`.

use crate::common;

use common::nginx::{Nginx, Options};
use common::{assert_all_ok, load_fails, load_json, num, start};

/// TLS records and the handshake add bytes on the wire, both ways; the payload is the same.
fn assert_tls_costs_more(tls: &serde_json::Value, plain: &serde_json::Value) {
    for way in ["sent", "received"] {
        let (t, p) =
            (num(tls, &format!("/wire_bytes_per_call/{way}")), num(plain, &format!("/wire_bytes_per_call/{way}")));
        assert!(t > p, "wire bytes {way} per call: TLS {t} not above plaintext {p}");
        assert_eq!(
            num(tls, &format!("/payload_bytes_per_call/{way}")),
            num(plain, &format!("/payload_bytes_per_call/{way}"))
        );
    }
}

#[test]
fn https_http1_and_http2_against_axum_tls() {
    let tls = start("rust-axum", &["--tls"]);
    let plain = start("rust-axum", &[]);
    let https = format!("https://{}", tls.addr);
    let http = format!("http://{}", plain.addr);
    for h2 in [false, true] {
        let mut args = vec!["-n", "100", "-c", "2", "--workload", "students", "--check"];
        if h2 {
            args.push("--http2");
        }
        let over_tls = load_json(&[&args[..], &["-k", &https]].concat());
        let over_tcp = load_json(&[&args[..], &[&http]].concat());
        assert_all_ok(&over_tls, 100);
        assert_all_ok(&over_tcp, 100);
        assert_eq!(over_tls["tls"], true);
        assert_eq!(over_tcp["tls"], false);
        assert_eq!(over_tls["protocol"], if h2 { "h2" } else { "http/1.1" }, "ALPN gave the protocol asked for");
        assert_tls_costs_more(&over_tls, &over_tcp);
    }
}

#[test]
fn grpcs_against_tonic_tls() {
    let tls = start("rust-tonic", &["--tls"]);
    let plain = start("rust-tonic", &[]);
    let args = ["-n", "100", "-c", "2", "--workload", "auth", "--check"];
    let over_tls = load_json(&[&args[..], &["-k", &format!("grpcs://{}", tls.addr)]].concat());
    let over_tcp = load_json(&[&args[..], &[&format!("grpc://{}", plain.addr)]].concat());
    assert_all_ok(&over_tls, 100);
    assert_all_ok(&over_tcp, 100);
    assert_eq!(over_tls["tls"], true);
    assert_eq!(over_tls["protocol"], "grpc");
    assert_tls_costs_more(&over_tls, &over_tcp);

    // Reflection works over TLS too.
    let step = load_json(&[
        "-n",
        "20",
        "-k",
        "-d",
        r#"{"ntimes": 1, "board": [{"x": 0, "y": 0}]}"#,
        &format!("grpcs://{}/callbench.v1.Life/Step", tls.addr),
    ]);
    assert_all_ok(&step, 20);
}

#[test]
fn a_self_signed_certificate_is_refused_without_k() {
    let axum = start("rust-axum", &["--tls"]);
    let tonic = start("rust-tonic", &["--tls"]);
    let https = format!("https://{}", axum.addr);
    let grpcs = format!("grpcs://{}", tonic.addr);
    for args in [
        vec!["-n", "5", "--workload", "students", &https],
        vec!["-n", "5", "--http2", "--workload", "students", &https],
        vec!["-n", "5", "--workload", "students", &grpcs],
        vec!["-n", "5", "-d", "{}", &format!("{grpcs}/callbench.v1.Life/Setup")],
    ] {
        let run = load_fails(&args, "certificate");
        assert!(run.elapsed.as_secs() < 5, "{}", run.all());
        assert!(run.stdout.is_empty(), "no report for a run that never started:\n{}", run.all());
    }
}

/// `openssl req -x509` makes a CA certificate (CA:TRUE) whose only name is its CN, which the web
/// PKI refuses as a server's own: given in `--cacert`, callbench trusts the server presenting it,
/// as curl does; another self-signed certificate there is still refused.
#[test]
fn a_self_signed_certificate_given_in_cacert_is_trusted_for_its_server() {
    let nginx = Nginx::start(&Options { tls: true, ..Options::default() });
    let target = format!("https://127.0.0.1:{}/ok", nginx.h2s.expect("the TLS port"));
    let own = nginx.dir.str("cert.pem");
    for http2 in [false, true] {
        let mut args = vec!["-n", "20", "--cacert", &own];
        args.extend(http2.then_some("--http2"));
        args.push(&target);
        assert_all_ok(&load_json(&args), 20);
    }
    let other = nginx.dir.str("other.pem");
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"])
        .args(["-keyout", &nginx.dir.str("other.key"), "-out", &other])
        .output()
        .expect("run openssl");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    load_fails(&["-n", "5", "--cacert", &other, &target], "certificate");
}
