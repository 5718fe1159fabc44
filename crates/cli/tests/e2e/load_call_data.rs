//! End-to-end: request data that varies, seen from a stock nginx's access log (`$request_body`,
//! which nginx fills in when it proxies the request): an NDJSON file's lines in turn, a template
//! filled in per call, and REST requests made per message from a google.api.http rule. The report
//! says which data the calls sent. (gRPC messages that vary: load_stock_servers, greeter_server.)

use crate::common;

use common::nginx::{Nginx, Options};
use common::{assert_all_ok, load_fails, load_json, TempDir};
use serde_json::json;
use std::time::{Duration, Instant};

/// nginx with a server on `port` that logs each request's method, URI and body, proxying it to a
/// location of its own that answers 200.
fn logging_nginx(port: u16) -> Nginx {
    let http = format!(
        "log_format body '$request_method $request_uri $request_body';\n  \
         server {{\n    listen 127.0.0.1:{port};\n    access_log body.log body;\n    \
         location /sink {{ access_log off; return 200 \"ok\\n\"; }}\n    \
         location / {{ proxy_pass http://127.0.0.1:{port}/sink; }}\n  }}"
    );
    Nginx::start(&Options { http, file: "x".into(), ..Options::default() })
}

/// The access log's lines once there are `n` (nginx writes each after answering), waited for up to 10 s.
fn logged(nginx: &Nginx, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = std::fs::read_to_string(nginx.dir.path("body.log")).unwrap_or_default();
        if log.lines().count() >= n || Instant::now() > deadline {
            return log.lines().map(str::to_string).collect();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn lines_in_turn_templates_and_rule_made_requests_reach_the_server() {
    let port = common::free_port();
    let nginx = logging_nginx(port);
    let url = format!("http://127.0.0.1:{port}/items");
    let dir = TempDir::new("call-data");

    // Three bodies in turn: one caller, so the order is the calls' order.
    std::fs::write(dir.path("bodies.ndjson"), "a=1\n\nb=2\r\nc=3\n").unwrap();
    let report = load_json(&["-n", "7", "-c", "1", "--data-lines", &dir.str("bodies.ndjson"), &url]);
    assert_all_ok(&report, 7);
    assert_eq!(
        report["data"],
        json!({"kind": "in-turn", "requests": 3, "template": false, "file": dir.str("bodies.ndjson")})
    );
    assert_eq!(report["call"], "POST /items");
    let sent: Vec<String> = logged(&nginx, 7).into_iter().map(|l| l.replacen("POST /items ", "", 1)).collect();
    assert_eq!(sent, ["a=1", "b=2", "c=3", "a=1", "b=2", "c=3", "a=1"]);

    // A template: each call's number once, by callers numbered 0 to 2, strings of 8 letters and digits.
    let report =
        load_json(&["-n", "30", "-c", "3", "--template", "-d", "n={{call}}&by={{caller}}&s={{string 8}}", &url]);
    assert_all_ok(&report, 30);
    assert_eq!(report["data"], json!({"kind": "per-call", "requests": 1, "template": true}));
    let lines = logged(&nginx, 37);
    let mut calls: Vec<u64> = Vec::new();
    for line in &lines[7..] {
        let body = line.strip_prefix("POST /items ").unwrap_or_else(|| panic!("{line}"));
        let fields: std::collections::BTreeMap<&str, &str> =
            body.split('&').filter_map(|f| f.split_once('=')).collect();
        calls.push(fields["n"].parse().unwrap());
        assert!(fields["by"].parse::<u64>().is_ok_and(|c| c < 3), "{line}");
        assert!(fields["s"].len() == 8 && fields["s"].chars().all(|c| c.is_ascii_alphanumeric()), "{line}");
    }
    calls.sort_unstable();
    assert_eq!(calls, (0..30).collect::<Vec<_>>(), "every call number once");

    // REST requests made per message from the rule: the path filled from each line's point.
    let rule = common::repo().join("crates/cli/tests/e2e/stock/grpc-gateway/route_guide_http.proto");
    std::fs::write(
        dir.path("points.ndjson"),
        "{\"latitude\": 1, \"longitude\": -2}\n{\"latitude\": 3, \"longitude\": 4}\n",
    )
    .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let by_rule = [
        "-n",
        "4",
        "-c",
        "1",
        "--proto",
        &rule.display().to_string(),
        "--http-rule",
        "routeguide.RouteGuide/GetFeature",
        "--data-lines",
        &dir.str("points.ndjson"),
        &base,
    ]
    .map(String::from);
    let report = load_json(&by_rule.iter().map(String::as_str).collect::<Vec<_>>());
    assert_all_ok(&report, 4);
    assert_eq!(report["call"], "GET /v1/features/1/-2");
    let gets: Vec<String> = logged(&nginx, 41)[37..].to_vec();
    assert_eq!(
        gets,
        ["GET /v1/features/1/-2 -", "GET /v1/features/3/4 -", "GET /v1/features/1/-2 -", "GET /v1/features/3/4 -"]
    );
}

#[test]
fn data_that_cannot_make_a_request_is_one_line_before_anything_is_sent() {
    let dir = TempDir::new("call-data-bad");
    std::fs::write(dir.path("empty.ndjson"), "\n\n").unwrap();
    // Nothing listens on port 9: each refusal comes before any connection is tried.
    let url = "http://127.0.0.1:9/x";
    load_fails(&["--data-lines", &dir.str("empty.ndjson"), url], "has no request");
    load_fails(&["--template", "-d", "{{when}}", url], "unknown placeholder {{when}}");
    load_fails(&["--template", "-d", "{{int 5 1}}", url], "the lowest is above the highest");
    load_fails(&["--http-rule", "a.B/C", "-d", "{}", url], "--http-rule reads the method's rule from --proto");
    std::fs::write(
        dir.path("norule.proto"),
        "syntax = \"proto3\";\npackage t;\nservice S { rpc M(R) returns (R); }\nmessage R { int32 id = 1; }\n",
    )
    .unwrap();
    load_fails(
        &["--proto", &dir.str("norule.proto"), "--http-rule", "t.S/M", "-d", "{}", url],
        "has no google.api.http rule",
    );
    load_fails(&["--workload", "auth", "--template", url], "--workload fills in the request");
}
