//! End-to-end: the real `callbench verify` against the real reference servers of every language, and
//! the manifests of the servers this machine cannot run say why.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};

fn callbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callbench"))
        .args(args)
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .output()
        .expect("callbench runs")
}

/// stdout and stderr, the FAIL lines first: a CI log keeps only the start and the end of a long panic message.
fn text(output: &Output) -> String {
    let all = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let failed: Vec<&str> = all.lines().filter(|l| l.trim_start().starts_with("FAIL ")).collect();
    match failed.is_empty() {
        true => all,
        false => format!("failed:\n{}\nthe whole output:\n{all}", failed.join("\n")),
    }
}

/// One server at a time within this binary under `cargo test`: sixteen at once on two cores (JVMs
/// starting, floods) starved php-fpm's stop past the contract's 5 s on a CI machine. scripts/test runs
/// each test in its own process with nextest, which holds them to two at once (.config/nextest.toml).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn verify_passes(server: &str) {
    let _turn = one_at_a_time();
    let output = callbench(&["verify", server, "--no-build", "--flood", "1000"]);
    let all = text(&output);
    assert!(output.status.success(), "verify {server} failed:\n{all}");
    assert!(all.contains(", 0 failed"), "{all}");
    // Both modes, gzip, the flood and the clean stop were checked.
    for step in [
        "vectors, mode preloaded",
        "vectors, mode per-request",
        "vectors through the load engine's client",
        "gzip both ways",
        "flood of bad input",
        "stops-on-sigterm",
    ] {
        assert!(all.contains(step), "no '{step}' in:\n{all}");
    }
}

#[test]
fn rust_actix_passes_every_vector() {
    verify_passes("rust-actix");
}

#[test]
fn rust_axum_passes_every_vector() {
    verify_passes("rust-axum");
}

/// tonic without our guard layer: the inputs the layer exists for are declared deviations.
#[test]
fn rust_tonic_noguard_passes_with_its_declared_deviations() {
    verify_passes("rust-tonic-noguard");
}

#[test]
fn rust_tonic_passes_every_vector() {
    verify_passes("rust-tonic");
}

/// A server that answers `200 {}` to everything must fail verification.
#[test]
fn a_wrong_server_fails_verification() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = [0u8; 65536];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                    if stream.write_all(reply.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    let output = callbench(&["verify", &format!("http://{addr}"), "--flood", "0"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("FAIL  rest-auth-"), "{all}");
    assert!(all.contains("through the engine's client: "), "the engine's client judged the same answers:\n{all}");
    assert!(!all.contains(" 0 failed\n"), "{all}");
}

#[test]
fn bad_targets_get_a_one_line_error() {
    for (args, message) in [
        (vec!["verify", "http://10.1.2.3:80"], "without --allow-remote"),
        (vec!["verify", "http://198.18.0.2:80"], "emulated link"),
        (vec!["verify", "no-such-server"], "no server named 'no-such-server'"),
        (vec!["verify", "ftp://127.0.0.1:1"], "neither a server name"),
        (vec!["serve", "no-such-server"], "no server named"),
    ] {
        let output = callbench(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn an_unreachable_address_fails_cleanly() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let output = callbench(&["verify", &format!("grpc://127.0.0.1:{port}"), "--flood", "0"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(text(&output).contains("cannot connect"), "{}", text(&output));
}

// Every language's servers, built by their manifests from the package registries (as scripts/setup does).

#[test]
fn go_nethttp_passes_every_vector() {
    verify_passes("go-nethttp");
}

#[test]
fn go_grpc_passes_every_vector() {
    verify_passes("go-grpc");
}

#[test]
fn python_fastapi_passes_every_vector() {
    verify_passes("python-fastapi");
}

#[test]
fn python_grpcio_passes_every_vector() {
    verify_passes("python-grpcio");
}

#[test]
fn node_fastify_passes_every_vector() {
    verify_passes("node-fastify");
}

#[test]
fn node_grpcjs_passes_every_vector() {
    verify_passes("node-grpcjs");
}

#[test]
fn java_spring_passes_every_vector() {
    verify_passes("java-spring");
}

#[test]
fn java_grpc_passes_every_vector() {
    verify_passes("java-grpc");
}

#[test]
fn php_fpm_passes_every_vector() {
    verify_passes("php-fpm");
}

/// `verify --tls`: the server started with its manifest's `[tls]` arguments serves every vector over TLS (its
/// own TLS stack, a certificate it made at start), the load engine's client included; one mode, a short flood.
/// Then, as `callbench serve NAME --tls`, it serves calls over TLS 1.2 as well as 1.3 (`load --tls-version`).
fn verify_passes_over_tls(server: &str, call_path: &str) {
    let _turn = one_at_a_time();
    let output = callbench(&["verify", server, "--no-build", "--tls", "--mode", "preloaded", "--flood", "200"]);
    let all = text(&output);
    assert!(output.status.success(), "verify {server} --tls failed:\n{all}");
    assert!(all.contains(", 0 failed"), "{all}");
    for step in ["vectors, mode preloaded", "vectors through the load engine's client", "flood of bad input"] {
        assert!(all.contains(step), "no '{step}' in:\n{all}");
    }
    let mut serve = Serve(
        Command::new(env!("CARGO_BIN_EXE_callbench"))
            .args(["serve", server, "--no-build", "--tls"])
            .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("callbench serve runs"),
    );
    // `callbench: NAME ready at https://127.0.0.1:PORT (Ctrl-C stops it)`; the end of stderr if it failed.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(serve.0.stderr.take().unwrap()));
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| Some(l.split_once(" ready at ")?.1.split_whitespace().next()?.to_string()));
    let url = url.unwrap_or_else(|| panic!("serve {server} --tls did not become ready"));
    std::thread::spawn(move || lines.for_each(drop)); // keep its stderr drained
    for version in ["1.2", "1.3"] {
        let target = format!("{url}{call_path}");
        let load = callbench(&["load", "-q", "-o", "json", "-k", "--tls-version", version, "-n", "50", &target]);
        let report: serde_json::Value = serde_json::from_slice(&load.stdout)
            .unwrap_or_else(|e| panic!("load over TLS {version} against {server}: {e}\n{}", text(&load)));
        assert_eq!(report["calls"]["ok"], 50, "TLS {version} against {server}:\n{report:#}");
        assert_eq!(report["tls"], true);
    }
}

/// `callbench serve`, stopped as a user stops it (SIGTERM: it stops its server) also when a test fails.
struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

#[test]
fn python_fastapi_serves_tls() {
    verify_passes_over_tls("python-fastapi", "/students");
}

#[test]
fn python_grpcio_serves_tls() {
    verify_passes_over_tls("python-grpcio", "/callbench.v1.Echo/Echo");
}

#[test]
fn node_fastify_serves_tls() {
    verify_passes_over_tls("node-fastify", "/students");
}

#[test]
fn node_grpcjs_serves_tls() {
    verify_passes_over_tls("node-grpcjs", "/callbench.v1.Echo/Echo");
}

#[test]
fn java_spring_serves_tls() {
    verify_passes_over_tls("java-spring", "/students");
}

#[test]
fn java_grpc_serves_tls() {
    verify_passes_over_tls("java-grpc", "/callbench.v1.Echo/Echo");
}

#[test]
fn php_fpm_serves_tls() {
    verify_passes_over_tls("php-fpm", "/students");
}

/// Servers that cannot run here are listed as unsupported, with the reason, and refused by verify.
#[test]
fn unsupported_servers_say_why() {
    let listing = callbench(&["servers"]);
    let text = String::from_utf8_lossy(&listing.stdout).to_string();
    // Every supported reference server serves TLS, and the listing says so.
    for line in text.lines().filter(|l| l.contains(" rest ") || l.contains(" grpc ")) {
        assert_eq!(line.contains(" tls "), !line.contains("(unsupported"), "{line}");
    }
    for server in ["php-grpc", "csharp-aspnetcore", "csharp-grpc"] {
        assert!(text.contains(server), "{server} not listed:\n{text}");
        let output = callbench(&["verify", server, "--no-build"]);
        let err = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(!output.status.success(), "verify {server} should refuse");
        assert!(err.contains("not supported here"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
