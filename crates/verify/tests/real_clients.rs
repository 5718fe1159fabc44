//! Off-the-shelf clients agree with callbench's own checks: every REST vector is
//! sent with curl, every JSON gRPC vector with grpcurl (through server
//! reflection), and the answers are judged by the same code `verify` uses.

use callbench_contract::vectors::{self, Body, GrpcCase, RestCase};
use callbench_launcher::manifest::{self, Protocol};
use callbench_launcher::process::{self, ServerProcess, StartOptions};
use callbench_launcher::repo::Repo;
use callbench_verify::{body, check, probe};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

fn repo() -> Repo {
    Repo {
        root: std::path::Path::new(
            &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
        )
        .join("../..")
        .canonicalize()
        .unwrap(),
    }
}

fn start(name: &str) -> ServerProcess {
    let repo = repo();
    let manifest = manifest::find(&repo, name).unwrap();
    // The binaries the workspace build made (scripts/test builds it before any test): a build from
    // inside `cargo test` would see other features and rebuild half the workspace. Built only if missing.
    if !repo.target_dir().join("release").join(name).exists() {
        process::build(&repo, &manifest).unwrap();
    }
    let mut server = ServerProcess::start(&repo, &manifest, &StartOptions::default()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(probe::wait_ready(&mut server, manifest.protocol, Duration::from_secs(60))).unwrap();
    server
}

/// A client tool from PATH or Go's bin folder.
fn tool(name: &str) -> String {
    let go_bin = std::env::var("HOME").map(|h| format!("{h}/go/bin/{name}")).unwrap_or_default();
    if Command::new(name).arg("--version").output().is_ok() {
        name.to_string()
    } else if std::path::Path::new(&go_bin).exists() {
        go_bin
    } else {
        panic!("{name} is not installed: run scripts/setup");
    }
}

fn rest_cases() -> Vec<(String, RestCase)> {
    vectors::all().into_iter().flat_map(|f| f.vectors).filter_map(|v| v.rest.map(|r| (v.name, r))).collect()
}

fn curl(addr: &str, case: &RestCase) -> (u16, String, Vec<u8>) {
    let (headers, payload) = check::rest_request(case).unwrap();
    // One folder per server (port): the tests run in parallel.
    let dir = std::env::temp_dir().join(format!("cb-curl-{}-{}", std::process::id(), addr.replace([':', '.'], "-")));
    std::fs::create_dir_all(&dir).unwrap();
    let (body_file, out_file) = (dir.join("body"), dir.join("out"));
    std::fs::write(&body_file, &payload).unwrap();
    let mut cmd = Command::new(tool("curl"));
    cmd.args(["-sS", "--http1.1", "-X", &case.method, "-o"]).arg(&out_file);
    cmd.args(["-w", "%{http_code} %{content_type}"]);
    for (name, value) in &case.headers {
        cmd.args(["-H", &format!("{name}:{}", if value.is_empty() { "" } else { value })]);
    }
    for (name, value) in headers.iter().filter(|(n, _)| !case.headers.contains_key(n)) {
        cmd.args(["-H", &format!("{name}: {value}")]);
    }
    if case.body.is_some() {
        // curl adds a form content type to --data-binary; a header the vector leaves out is removed.
        if !headers.iter().any(|(n, v)| n == "content-type" && !v.is_empty()) {
            cmd.args(["-H", "Content-Type:"]);
        }
        cmd.arg("--data-binary").arg(format!("@{}", body_file.display()));
    }
    cmd.arg(format!("http://{addr}{}", case.path));
    let output = cmd.output().expect("curl runs");
    let line = String::from_utf8_lossy(&output.stdout).to_string();
    let (status, content_type) = line.split_once(' ').unwrap_or((&line, ""));
    let body = std::fs::read(&out_file).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (status.parse().unwrap_or(0), content_type.to_string(), body)
}

fn curl_agrees(server: &str) {
    let server = start(server);
    let addr = server.addr.to_string();
    let mut failures = Vec::new();
    let cases = rest_cases();
    for (name, case) in &cases {
        let (status, content_type, body) = curl(&addr, case);
        if let Err(e) = check::judge_rest(case, status, &content_type, &body) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "curl disagrees on {} of {} vectors:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn curl_agrees_with_rust_actix() {
    curl_agrees("rust-actix");
}

#[test]
fn curl_agrees_with_rust_axum() {
    curl_agrees("rust-axum");
}

/// grpcurl exits with 64 + the status code when a call fails. `json` is the request message, or
/// a stream's messages one after another.
fn grpcurl(addr: &str, case: &GrpcCase, json: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(tool("grpcurl"))
        .args(["-plaintext", "-format", "json", "-d", "@", addr, &case.method])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("grpcurl runs");
    child.stdin.take().unwrap().write_all(json.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let code = match output.status.code() {
        Some(0) => Some(0),
        Some(c) if c >= 64 => Some(c - 64),
        _ => None,
    };
    (code, String::from_utf8_lossy(&output.stdout).into(), String::from_utf8_lossy(&output.stderr).into())
}

#[test]
fn grpcurl_agrees_with_rust_tonic() {
    let server = start("rust-tonic");
    assert_eq!(manifest::find(&repo(), "rust-tonic").unwrap().protocol, Protocol::Grpc);
    let addr = server.addr.to_string();
    let mut failures = Vec::new();
    let mut checked = 0;
    for v in vectors::all().into_iter().flat_map(|f| f.vectors) {
        // grpcurl sends JSON through reflection; raw-byte vectors and content-type tricks are callbench's own.
        let Some(case) = v.grpc else { continue };
        let jsons: Option<Vec<String>> = case
            .bodies()
            .into_iter()
            .map(|b| match b {
                Body::Json(json) => Some(json.to_string()),
                _ => None,
            })
            .collect();
        let (Some(jsons), None) = (jsons, &case.content_type) else { continue };
        if body::method(&case.method).is_none() {
            continue;
        }
        checked += 1;
        let (code, stdout, stderr) = grpcurl(&addr, &case, &jsons.join("\n"));
        let judged =
            check::judge_grpc_status(&case, code, &stderr).map_err(anyhow::Error::from).and_then(|judge_reply| {
                if !judge_reply {
                    return Ok(());
                }
                let desc = check::output(&case)?;
                let got = serde_json::Deserializer::from_str(&stdout)
                    .into_iter::<serde_json::Value>()
                    .map(|reply| {
                        callbench_contract::rest_json::message_from_proto_json(&desc, &reply?)
                            .map_err(anyhow::Error::msg)
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                if let Some(expected) = &case.expect.messages {
                    check::judge_grpc_stream(&case, expected, &got)?;
                }
                match (&case.expect.json, got.first()) {
                    (Some(_), Some(first)) => Ok(check::judge_grpc_reply(&case, first)?),
                    (Some(_), None) => anyhow::bail!("no reply message"),
                    (None, _) => Ok(()),
                }
            });
        if let Err(e) = judged {
            failures.push(format!("{}: {e}", v.name));
        }
    }
    assert!(checked >= 20, "only {checked} gRPC vectors checked");
    assert!(
        failures.is_empty(),
        "grpcurl disagrees on {} of {checked} vectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn grpcurl_lists_the_contract_through_reflection() {
    let server = start("rust-tonic");
    let output = Command::new(tool("grpcurl")).args(["-plaintext", &server.addr.to_string(), "list"]).output().unwrap();
    let services = String::from_utf8_lossy(&output.stdout);
    for service in callbench_contract::service_names() {
        assert!(services.lines().any(|l| l.trim() == service), "{service} not listed: {services}");
    }
    assert!(services.contains("grpc.health.v1.Health"), "{services}");
}
