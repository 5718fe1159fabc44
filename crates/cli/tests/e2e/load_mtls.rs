//! End-to-end: mutual TLS and the TLS server name against a stock nginx that requires a client
//! certificate signed by the test's own CA, and whose certificate names only `localhost`: without
//! `--cert`/`--key` nginx refuses every call (and `load` says no call succeeded), with them every
//! call succeeds; an address target checks the certificate against `--tls-server-name`.

use crate::common;

use common::nginx::{Nginx, Options};
use common::{load, load_json};

#[test]
fn a_server_that_requires_a_client_certificate_gets_one_with_cert_and_key() {
    let nginx = Nginx::start(&Options { mtls: true, ..Options::default() });
    let port = nginx.h2s.expect("the TLS port");
    let (ca, cert, key) = (nginx.dir.str("ca.pem"), nginx.dir.str("client.pem"), nginx.dir.str("client.key"));
    let target = format!("https://127.0.0.1:{port}/ok");
    let trusted = ["--cacert", &ca, "--tls-server-name", "localhost"];
    // No client certificate: nginx answers 400 to every call.
    let run = load(&[&["-n", "10", "-q"], &trusted[..], &[&target]].concat());
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(run.stderr.contains("no call succeeded: every call failed: 10 (http_400 ×10)"), "{}", run.all());
    // With it, over HTTP/1.1 and HTTP/2 (ALPN h2).
    for http2 in [false, true] {
        let mut args = vec!["-n", "20", "--cert", &cert, "--key", &key];
        args.extend(trusted);
        args.extend(http2.then_some("--http2"));
        args.push(&target);
        let report = load_json(&args);
        common::assert_all_ok(&report, 20);
        assert_eq!(report["protocol"], if http2 { "h2" } else { "http/1.1" }, "{report:#}");
    }
}

#[test]
fn the_certificate_is_checked_against_the_tls_server_name() {
    let nginx = Nginx::start(&Options { mtls: true, ..Options::default() });
    let port = nginx.h2s.expect("the TLS port");
    let (ca, cert, key) = (nginx.dir.str("ca.pem"), nginx.dir.str("client.pem"), nginx.dir.str("client.key"));
    let target = format!("https://127.0.0.1:{port}/ok");
    let client = ["--cacert", &ca, "--cert", &cert, "--key", &key];
    // The certificate names localhost, not 127.0.0.1: refused before any call.
    let run = load(&[&["-n", "5"], &client[..], &[&target]].concat());
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(run.stderr.to_lowercase().contains("certificate"), "{}", run.all());
    // Half of a pair, or TLS flags on a plain target, is one line.
    common::load_fails(&["-n", "1", "--cert", &cert, &target], "--key");
    common::load_fails(
        &["-n", "1", "--tls-server-name", "localhost", &format!("http://127.0.0.1:{}/ok", nginx.h1)],
        "TLS",
    );
}
