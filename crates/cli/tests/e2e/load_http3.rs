//! End-to-end: `callbench load --http3` (QUIC) against the reference REST servers that serve HTTP/3
//! (rust-axum on h3/quinn, go-nethttp on quic-go), every load model, and against a stock HTTP/3
//! server none of us wrote (quic-go's example server, installed by scripts/setup).

use crate::common;

use common::{assert_all_ok, installed, load_fails, load_json, num, Guard, TempDir};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A reference server serving TLS and HTTP/3 on a free port, and its `https://` base.
fn server(name: &str) -> (common::Server, String) {
    let bin = match name {
        "go-nethttp" => {
            let bin = std::path::Path::new(common::callbench()).parent().unwrap().join("../servers/go-nethttp/server");
            installed(&bin.to_string_lossy())
        }
        _ => common::server_bin(name),
    };
    let server = common::Server::start(&bin, &["--tls", "--http3"]);
    let base = format!("https://127.0.0.1:{}", server.port());
    (server, base)
}

/// Closed loop, open loop and a rate shape, streams shared on two connections; every answer checked.
fn every_load_model(base: &str) {
    let h3 = ["--http3", "-k", "--check"];
    let closed =
        load_json(&[&h3[..], &["--workload", "students", "-n", "400", "-c", "8", "--connections", "2", base]].concat());
    assert_all_ok(&closed, 400);
    assert_eq!((closed["protocol"].as_str(), closed["tls"].as_bool()), (Some("h3"), Some(true)), "{closed:#}");
    assert_eq!(num(&closed, "/connections_opened"), 2.0, "{closed:#}");
    // Bytes in the UDP datagrams: more than the payload (QUIC, TLS and HTTP/3 framing).
    assert!(
        num(&closed, "/wire_bytes_per_call/received") > num(&closed, "/payload_bytes_per_call/received"),
        "{closed:#}"
    );

    let open = load_json(&[&h3[..], &["--workload", "auth", "--rate", "300", "-z", "1s", "-c", "4", base]].concat());
    // Calls the schedule could not start on a busy machine are not made; the ones made all succeed.
    assert!(num(&open, "/calls/ok") >= 30.0 && num(&open, "/calls/errors") == 0.0, "{open:#}");
    assert_eq!(num(&open, "/rate/requested"), 300.0, "{open:#}");

    let shaped =
        load_json(&[&h3[..], &["--workload", "echo", "--rate-shape", "100@300ms,200@300ms", "-c", "4", base]].concat());
    assert!(num(&shaped, "/calls/ok") >= 10.0 && num(&shaped, "/calls/errors") == 0.0, "{shaped:#}");
    assert_eq!(shaped["segments"].as_array().map(Vec::len), Some(2), "one summary per step: {shaped:#}");

    // Streamed bodies: an NDJSON upload of 200 records and a download of 300 lines.
    for (workload, records) in [("records-upload", "200"), ("records-download", "300"), ("records-batch", "50")] {
        let run = load_json(
            &[&h3[..], &["--workload", workload, "--records", records, "-n", "30", "-c", "3", base]].concat(),
        );
        assert_all_ok(&run, 30);
    }

    // A new connection per call: each call's handshake is QUIC's, with no TCP connect to report.
    let cold = load_json(
        &[&h3[..], &["--workload", "students", "-n", "20", "-c", "2", "--new-connection-per-call", base]].concat(),
    );
    assert_all_ok(&cold, 20);
    assert_eq!(num(&cold, "/connections_opened"), 20.0, "{cold:#}");
    assert!(num(&cold, "/cold_calls/quic_handshake_us/p50") > 0.0, "{cold:#}");
    assert!(cold["cold_calls"].get("tcp_connect_us").is_none(), "{cold:#}");

    // 0-RTT: a returning client's requests in its first flight; every call still answered.
    let early = [&h3[..], &["--workload", "students", "-n", "20", "--new-connection-per-call"][..]].concat();
    let zero = load_json(&[&early[..], &["--tls-resume", "--zero-rtt", base]].concat());
    assert_all_ok(&zero, 20);
}

#[test]
fn rust_axum_over_http3_in_every_load_model() {
    let (_server, base) = server("rust-axum");
    every_load_model(&base);
}

#[test]
fn go_nethttp_over_http3_in_every_load_model() {
    let (_server, base) = server("go-nethttp");
    every_load_model(&base);
}

/// rust-axum's `--quic-congestion`: every controller quinn offers serves checked calls (what each does
/// across a lossy link is measured in bench/results/quic-congestion-2026-12-04.md, not asserted here); one it
/// does not know, from the environment `callbench serve` passes on, stops the server with one line.
#[test]
fn rust_axum_serves_http3_with_each_congestion_controller() {
    let bin = common::server_bin("rust-axum");
    for controller in ["cubic", "new-reno", "bbr"] {
        let server = common::Server::start(&bin, &["--tls", "--http3", "--quic-congestion", controller]);
        let base = format!("https://127.0.0.1:{}", server.port());
        let run = load_json(&["--http3", "-k", "--check", "--workload", "students", "-n", "200", "-c", "8", &base]);
        assert_all_ok(&run, 200);
    }
    let users = TempDir::new("quic-congestion");
    callbench_workloads::users::write_users_json(&users.path("users.json")).unwrap();
    let refused = Command::new(&bin)
        .args(["--port", "0", "--users", &users.str("users.json"), "--tls", "--http3"])
        .env("CALLBENCH_QUIC_CONGESTION", "vegas")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("CALLBENCH_QUIC_CONGESTION=vegas: expected cubic, new-reno or bbr"), "{stderr}");
}

#[test]
fn bad_http3_requests_are_one_line_errors() {
    load_fails(&["--http3", "-n", "1", "http://127.0.0.1:9/"], "--http3 applies to https://");
    load_fails(&["--http3", "-k", "--zero-rtt", "-n", "1", "https://127.0.0.1:9/"], "--zero-rtt needs --tls-resume");
    load_fails(&["--zero-rtt", "--tls-resume", "-n", "1", "https://127.0.0.1:9/"], "--zero-rtt applies to --http3");
    load_fails(&["--http3", "--tls-version", "1.2", "-k", "-n", "1", "https://127.0.0.1:9/"], "TLS 1.3 only");
    // Two protocols at once is a usage error (exit 2), said on one line.
    let both = common::load(&["--http3", "--http2", "-n", "1", "https://127.0.0.1:9/"]);
    assert_eq!(both.code, Some(2), "{}", both.all());
    common::assert_one_line(&both, "'--http3' cannot be used with '--http2'");
    // A TLS server with no HTTP/3 (nothing on its UDP port): one clear error once the connect timeout passes.
    let plain = common::Server::start(&common::server_bin("rust-actix"), &["--tls"]);
    let target = format!("https://127.0.0.1:{}/students", plain.port());
    load_fails(
        &["--http3", "-k", "--connect-timeout", "1s", "-n", "1", &target],
        "is an HTTP/3 server listening on UDP?",
    );
}

/// quic-go's example server, a stock HTTP/3 server: its echo handler answers the body it was sent,
/// checked on every call, in closed and open loop.
#[test]
fn quic_gos_example_server_answers_over_http3() {
    let bin = installed("~/go/bin/quic_go_example_server");
    let dir = TempDir::new("quic-go-example");
    let (ca, ca_key, csr) = (dir.str("ca.pem"), dir.str("ca.key"), dir.str("leaf.csr"));
    let (cert, key, ext) = (dir.str("cert.pem"), dir.str("key.pem"), dir.str("leaf.ext"));
    std::fs::write(&ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    // A CA of the test's own, and a certificate for localhost that it signs (webpki takes no CA as a server's).
    for args in [
        format!("req -x509 {ec} -days 1 -subj /CN=callbench-test-ca -keyout {ca_key} -out {ca}"),
        format!("req {ec} -subj /CN=localhost -keyout {key} -out {csr}"),
        format!("x509 -req -in {csr} -CA {ca} -CAkey {ca_key} -set_serial 1 -days 1 -extfile {ext} -out {cert}"),
    ] {
        let made = Command::new("openssl").args(args.split(' ')).stdout(Stdio::null()).stderr(Stdio::null()).status();
        assert!(made.unwrap().success(), "openssl {args} failed");
    }
    let port = common::free_port();
    let _server = Guard::spawn(
        Command::new(bin)
            .args(["-bind", &format!("127.0.0.1:{port}"), "-cert", &cert, "-key", &key])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let echo = format!("https://localhost:{port}/demo/echo");
    // It listens on UDP only: wait until a call goes through (each try bounded by its connect timeout).
    let started = std::time::Instant::now();
    while common::load(&["--http3", "--cacert", &ca, "-n", "1", "--connect-timeout", "1s", "-d", "x", &echo]).code
        != Some(0)
    {
        assert!(started.elapsed() < Duration::from_secs(20), "quic_go_example_server answered nothing in 20 s");
    }
    let body = "callbench over HTTP/3";
    let checked = ["--http3", "--cacert", &ca, "-d", body, "--expect-body", body];
    let closed = load_json(&[&checked[..], &["-n", "300", "-c", "6", "--connections", "2", &echo]].concat());
    assert_all_ok(&closed, 300);
    assert_eq!(num(&closed, "/payload_bytes_per_call/received"), body.len() as f64, "{closed:#}");
    // A new QUIC connection per call to a name: each looks localhost up first (the cold call's first phase).
    let cold = load_json(&[&checked[..], &["-n", "5", "-c", "1", "--new-connection-per-call", &echo]].concat());
    assert_all_ok(&cold, 5);
    assert_eq!(cold["settings"]["name_lookup"], "per-connection", "{cold:#}");
    assert!(
        num(&cold, "/cold_calls/name_lookup_us/p50") > 0.0 && num(&cold, "/cold_calls/quic_handshake_us/p50") > 0.0
    );
    let open = load_json(&[&checked[..], &["--rate", "200", "-z", "1s", &echo]].concat());
    assert!(num(&open, "/calls/ok") >= 20.0 && num(&open, "/calls/errors") == 0.0, "{open:#}");
    // A certificate it does not trust is a failed handshake, said once.
    load_fails(&["--http3", "-n", "1", &echo], "QUIC handshake");
    // --tls-server-name is the name QUIC's TLS sends and checks: its certificate names localhost, not this.
    let by_address = echo.replace("localhost", "127.0.0.1");
    let named = ["--http3", "--cacert", &ca, "-n", "2", "-d", "x", "--tls-server-name"];
    assert_all_ok(&load_json(&[&named[..], &["localhost", &by_address]].concat()), 2);
    load_fails(&[&named[..], &["elsewhere.example", &by_address]].concat(), "QUIC handshake");
}
