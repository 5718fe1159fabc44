//! The contract's REST answers, checked against a real server binary over real sockets.
//! Every REST server runs this suite through `rest_server_tests!`.

use crate::http1::padded_json;
use crate::server::Server;
use serde_json::json;
use std::time::Duration;

const JSON: Option<&str> = Some("application/json");
const SHA512_ABC: &str = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f";

fn body(value: serde_json::Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

pub fn every_endpoint_answers(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = server.connect();

    let r = conn.call("PUT", "/auth/9999", JSON, &body(json!({"password": "abc"})));
    assert_eq!((r.status, r.json()), (200, json!({"hash": SHA512_ABC})));
    assert_eq!(r.header("content-type"), Some("application/json"));

    let r = conn.call("GET", "/students", None, b"");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["students"][1]["address"]["postalCode"], "53703");

    let car = json!({"car": {"make": "toyota", "model": "corolla", "trim": "4DR Sedan", "color": "gray", "year": 2012, "mileage": 120000},
                     "driver": {"firstname": "John", "lastname": "Smith", "driverId": "someId"}});
    let r = conn.call("POST", "/cars", JSON, &body(car.clone()));
    assert_eq!((r.status, r.json()), (200, car));

    let r = conn.call("GET", "/life/setup", None, b"");
    assert_eq!((r.status, r.json()), (200, json!({"board": [[0, 2], [1, 0], [1, 2], [3, 1], [4, 2], [5, 2], [6, 2]]})));

    let blinker = json!({"ntimes": 1, "board": [[0, 1], [1, 1], [2, 1], [2, 1]]});
    let r = conn.call("POST", "/life/step", JSON, &body(blinker));
    assert_eq!((r.status, r.json()), (200, json!({"board": [[1, 0], [1, 1], [1, 2]]})));

    let echo = json!({"records": [{"id": 7, "name": "r", "score": 0.5, "active": true, "kind": "KIND_LARGE",
                      "location": {"city": "c", "latitude": 1.5, "longitude": -2.5}, "tags": ["a"], "samples": [1, 2]}]});
    let r = conn.call("POST", "/echo", JSON, &body(echo.clone()));
    assert_eq!((r.status, r.json()), (200, echo));

    let r = conn.call("GET", "/health", None, b"");
    assert_eq!((r.status, r.json()), (200, json!({"status": "SERVING"})));
    assert_eq!(r.header("content-type"), Some("application/json"));
}

pub fn per_request_mode_reads_the_file_each_call(bin: &str) {
    let server = Server::start(bin, &["--mode", "per-request", "--workers", "2"]);
    let r = server.call("PUT", "/auth/1", JSON, &body(json!({"password": "abc"})));
    assert_eq!((r.status, r.json()), (200, json!({"hash": SHA512_ABC})));
    assert_eq!(server.call("PUT", "/auth/10001", JSON, &body(json!({"password": "abc"}))).status, 404);
}

pub fn bad_input_is_400(bin: &str) {
    let server = Server::start(bin, &[]);
    let cases: [(&str, &str, &[u8]); 9] = [
        ("PUT", "/auth/1", br#"{"password": "abc""#),        // malformed
        ("PUT", "/auth/1", br#"{"password": 5}"#),           // wrong type
        ("PUT", "/auth/1", br#"{}"#),                        // missing field
        ("PUT", "/auth/1", b"{\"password\": \"\xff\xfe\"}"), // invalid UTF-8
        ("PUT", "/auth/1", br#"{"password": ""}"#),          // over a limit
        ("PUT", "/auth/abc", br#"{"password": "abc"}"#),     // id not an integer
        ("POST", "/life/step", br#"{"board": []}"#),         // missing ntimes
        ("POST", "/life/step", br#"{"ntimes": 1001, "board": []}"#),
        ("POST", "/echo", br#"{"records": [{"kind": "KIND_HUGE"}]}"#),
    ];
    for (method, path, payload) in cases {
        let r = server.call(method, path, JSON, payload);
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, "INVALID_ARGUMENT"),
            "{}",
            String::from_utf8_lossy(payload)
        );
    }
    let r = server.call("POST", "/cars", JSON, &body(json!({"car": {"make": "m", "model": "m", "year": 2000}})));
    assert_eq!(r.status, 400, "driver is required");
}

pub fn keep_alive_survives_a_400(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = server.connect();
    for payload in
        [&br#"{"password": "#[..], br#"{"password": 5}"#, b"{}", b"{\"password\": \"\xff\"}", br#"{"password": ""}"#]
    {
        assert_eq!(conn.call("PUT", "/auth/1", JSON, payload).status, 400);
    }
    assert_eq!(conn.call("PUT", "/auth/1", JSON, &body(json!({"password": "abc"}))).status, 200);
}

pub fn unknown_user_is_404(bin: &str) {
    let server = Server::start(bin, &[]);
    for id in ["0", "10001", "-1"] {
        let r = server.call("PUT", &format!("/auth/{id}"), JSON, &body(json!({"password": "abc"})));
        assert_eq!((r.status, r.error_code().as_str()), (404, "NOT_FOUND"));
    }
}

pub fn bodies_up_to_4_mib_are_accepted_and_bigger_ones_are_413(bin: &str) {
    let server = Server::start(bin, &[]);
    let limit = callbench_workloads::limits::MAX_BODY_BYTES;
    let r = server.call("POST", "/echo", JSON, &padded_json(r#"{"records":["#, "]}", limit));
    assert_eq!((r.status, r.json()), (200, json!({"records": []})));
    let r = server.call("POST", "/echo", JSON, &padded_json(r#"{"records":["#, "]}", limit + 1));
    assert_eq!((r.status, r.error_code().as_str()), (413, "RESOURCE_EXHAUSTED"));
}

pub fn only_application_json_is_accepted(bin: &str) {
    let server = Server::start(bin, &[]);
    let payload = body(json!({"password": "abc"}));
    for content_type in
        [None, Some("text/plain"), Some("application/problem+json"), Some("text/json"), Some("nonsense")]
    {
        // A fresh connection each: a server may close one whose request body it did not read.
        let r = server.call("PUT", "/auth/1", content_type, &payload);
        assert_eq!((r.status, r.error_code().as_str()), (415, "UNSUPPORTED_MEDIA_TYPE"), "{content_type:?}");
    }
    let r = server.call("PUT", "/auth/1", Some("Application/JSON; charset=utf-8"), &payload);
    assert_eq!(r.status, 200);
}

pub fn unknown_routes_are_404_and_wrong_methods_405(bin: &str) {
    let server = Server::start(bin, &[]);
    let mut conn = server.connect();
    for (method, path) in [("GET", "/nope"), ("GET", "/auth/1/x"), ("POST", "/students/"), ("GET", "/")] {
        let r = conn.call(method, path, None, b"");
        assert_eq!((r.status, r.error_code().as_str()), (404, "NOT_FOUND"), "{method} {path}");
    }
    for (method, path, allow) in [
        ("GET", "/auth/1", "PUT"),
        ("POST", "/students", "GET"),
        ("GET", "/cars", "POST"),
        ("DELETE", "/health", "GET"),
    ] {
        let r = conn.call(method, path, None, b"");
        assert_eq!((r.status, r.error_code().as_str()), (405, "METHOD_NOT_ALLOWED"), "{method} {path}");
        let allowed = r.header("allow").unwrap_or_default();
        assert!(allowed.split(',').any(|m| m.trim() == allow), "Allow: {allowed}");
    }
    assert_eq!(conn.call("GET", "/health", None, b"").status, 200);
}

pub fn stops_promptly_on_sigterm_and_sigint(bin: &str) {
    for signal in ["TERM", "INT"] {
        let server = Server::start(bin, &["--workers", "2"]);
        let idle = server.connect(); // a keep-alive connection must not hold the stop
        let status = server.stop(signal, Duration::from_secs(3)).expect("still running 3 s after the signal");
        assert!(status.success(), "SIG{signal}: {status}");
        drop(idle);
    }
}

pub fn prints_its_version(bin: &str) {
    let out = std::process::Command::new(bin).arg("--version").output().expect("run --version");
    let text = String::from_utf8_lossy(&out.stdout);
    let name = std::path::Path::new(bin).file_name().and_then(|n| n.to_str()).unwrap_or_default();
    assert_eq!(text.trim(), format!("{name} {}", env!("CARGO_PKG_VERSION")));
}

/// gzip both ways (seed 002 measured REST with and without it): a reply is gzipped only when the
/// client accepts gzip, and a gzip request body is inflated before it is read.
pub fn gzip_both_ways(bin: &str) {
    let server = Server::start(bin, &[]);
    let url = |path: &str| format!("http://127.0.0.1:{}{path}", server.port());
    let headers = |args: &[&str]| {
        let mut all = vec!["-sS", "--max-time", "10", "-D", "-", "-o", "/dev/null"];
        all.extend_from_slice(args);
        String::from_utf8_lossy(&crate::tls::run("curl", &all).stdout).to_ascii_lowercase()
    };
    assert!(headers(&["-H", "accept-encoding: gzip", &url("/students")]).contains("content-encoding: gzip"));
    assert!(!headers(&[&url("/students")]).contains("content-encoding"), "no gzip unless accepted");
    let (_, status, plain) = crate::tls::curl(&[&url("/students")]);
    let (_, zipped_status, inflated) = crate::tls::curl(&["--compressed", &url("/students")]);
    assert_eq!((status, zipped_status), (200, 200));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&inflated).unwrap(),
        serde_json::from_str::<serde_json::Value>(&plain).unwrap()
    );

    let echo = json!({"records": [{"id": 3, "name": "gz", "score": 1.5, "active": true, "kind": "KIND_SMALL",
                      "location": null, "tags": ["x"], "samples": [1]}]});
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, &body(echo.clone())).unwrap();
    let dir = std::env::temp_dir().join(format!("callbench-gzip-{}-{}", std::process::id(), server.port()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("echo.json.gz");
    std::fs::write(&file, encoder.finish().unwrap()).unwrap();
    let data = format!("@{}", file.display());
    let (_, status, answer) = crate::tls::curl(&[
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-H",
        "content-encoding: gzip",
        "--data-binary",
        &data,
        &url("/echo"),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&answer).unwrap()["records"][0]["name"], "gz");
}
