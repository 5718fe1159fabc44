//! End-to-end: `callbench load` against servers none of us wrote, installed by scripts/setup:
//! nginx (HTTP/1.1 and h2c, a static file and a `return 200`), grpc-go's helloworld
//! greeter_server and its route_guide example server (described by .proto files: they have no
//! reflection), the latter with a method of each kind, streams both ways included; and that
//! example's edition 2023 proto served by grpcio-reflection.

use crate::common;

use common::nginx::{Nginx, Options};
use common::{assert_all_ok, installed, load_fails, load_json, num, Guard, TempDir};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A static file of this size (bytes), deterministic text.
const FILE_SIZE: usize = 4000;

/// nginx with gzip on and keep-alive connections that last: the tests here count connections.
fn nginx() -> Nginx {
    let line = "callbench serves this file to see wire bytes counted against a server it did not write.\n";
    let file: String = line.chars().cycle().take(FILE_SIZE).collect();
    let http = "keepalive_requests 100000;\n  gzip on;\n  gzip_types text/plain;\n  gzip_min_length 0;".to_string();
    Nginx::start(&Options { http, file, ..Options::default() })
}

/// `-H 'Host: …'` names the virtual host on every protocol: HTTP/1.1's Host header, HTTP/2's
/// `:authority` (curl's rule), as nginx logs `$host` for each request.
#[test]
fn a_host_header_is_the_authority_over_http2_too() {
    // A path without a slash is under nginx's prefix, its own folder.
    let http = "log_format host '$server_protocol $host';\n  access_log host.log host;".to_string();
    let nginx = Nginx::start(&Options { http, file: "x".into(), ..Options::default() });
    let host = ["-H", "Host: api.example.test"];
    assert_all_ok(&load_json(&[&host[..], &["-n", "3", &format!("http://127.0.0.1:{}/ok", nginx.h1)]].concat()), 3);
    let h2 = format!("http://127.0.0.1:{}/ok", nginx.h2);
    assert_all_ok(&load_json(&[&host[..], &["-n", "3", "--http2", &h2]].concat()), 3);
    assert_all_ok(&load_json(&["-n", "2", "--http2", &h2]), 2);
    // nginx writes each request's line once it has answered: the eight of them, waited for.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut log = String::new();
    while log.lines().count() < 8 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        log = std::fs::read_to_string(nginx.dir.path("host.log")).unwrap_or_default();
    }
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        [&["HTTP/1.1 api.example.test"; 3][..], &["HTTP/2.0 api.example.test"; 3][..], &["HTTP/2.0 127.0.0.1"; 2][..]]
            .concat(),
        "{log}"
    );
}

#[test]
fn nginx_over_http1_and_h2c() {
    let nginx = nginx();
    let file = |port: u16| format!("http://127.0.0.1:{port}/file.txt");

    let h1 = load_json(&["-n", "300", "-c", "4", &file(nginx.h1)]);
    assert_all_ok(&h1, 300);
    assert_eq!(h1["protocol"], "http/1.1");
    assert_eq!(num(&h1, "/connections_opened"), 4.0);
    assert_eq!(num(&h1, "/payload_bytes_per_call/received"), FILE_SIZE as f64, "{h1:#}");
    assert!(num(&h1, "/wire_bytes_per_call/received") >= FILE_SIZE as f64 + 100.0, "headers too: {h1:#}");

    let h2 = load_json(&["-n", "300", "--http2", "--connections", "2", "--streams", "4", &file(nginx.h2)]);
    assert_all_ok(&h2, 300);
    assert_eq!(h2["protocol"], "h2");
    assert_eq!(num(&h2, "/connections_opened"), 2.0);
    assert_eq!(num(&h2, "/payload_bytes_per_call/received"), FILE_SIZE as f64, "{h2:#}");
    assert!(num(&h2, "/wire_bytes_per_call/received") >= FILE_SIZE as f64, "{h2:#}");
    // HPACK: headers cost less per call over HTTP/2 than over HTTP/1.1.
    assert!(num(&h2, "/wire_bytes_per_call/received") < num(&h1, "/wire_bytes_per_call/received"));

    for args in [
        vec!["-n".to_string(), "200".into(), "-c".into(), "2".into(), format!("http://127.0.0.1:{}/ok", nginx.h1)],
        vec![
            "-n".into(),
            "200".into(),
            "-c".into(),
            "4".into(),
            "--http2".into(),
            format!("http://127.0.0.1:{}/ok", nginx.h2),
        ],
        vec![
            "-n".into(),
            "50".into(),
            "-c".into(),
            "2".into(),
            "--new-connection-per-call".into(),
            format!("http://127.0.0.1:{}/ok", nginx.h1),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let report = load_json(&args);
        let calls = num(&report, "/settings/calls") as u64;
        assert_all_ok(&report, calls);
        assert_eq!(num(&report, "/payload_bytes_per_call/received"), 3.0, "ok\\n: {report:#}");
        if report["settings"]["new_connection_per_call"] == true {
            assert_eq!(num(&report, "/connections_opened"), calls as f64);
        }
    }
    let missing = load_json(&["-n", "20", "-c", "2", &format!("http://127.0.0.1:{}/missing", nginx.h1)]);
    assert_eq!(missing["errors"], json!({"http_404": 20}));
}

#[test]
fn nginx_gzip_answers_are_checked_decompressed_and_head_has_no_body() {
    let nginx = nginx();
    let file = nginx.dir.str("file.txt");
    let expect = format!("@{file}");
    for (port, h2) in [(nginx.h1, false), (nginx.h2, true)] {
        let url = format!("http://127.0.0.1:{port}/file.txt");
        let mut base = vec!["-n", "100", "-c", "2"];
        if h2 {
            base.push("--http2");
        }
        let gzip = load_json(&[&base[..], &["--gzip", "--expect-body", &expect, &url]].concat());
        assert_all_ok(&gzip, 100);
        let received = num(&gzip, "/payload_bytes_per_call/received");
        assert!(
            received > 0.0 && received < FILE_SIZE as f64 / 4.0,
            "gzip on the wire, checked decompressed: {gzip:#}"
        );
        let wrong = load_json(&[&base[..], &["--gzip", "--expect-body", "not the file", &url]].concat());
        assert_eq!(wrong["errors"], json!({"validation": 100}), "{wrong:#}");

        // HEAD: a Content-Length and no body; nothing must wait for one.
        let head = load_json(&[&base[..], &["-X", "HEAD", "--timeout", "2s", &url]].concat());
        assert_all_ok(&head, 100);
        assert_eq!(num(&head, "/payload_bytes_per_call/received"), 0.0, "{head:#}");
        assert!(num(&head, "/latency_us/max") < 1_000_000.0, "{head:#}");
    }
}

const HELLOWORLD_PROTO: &str = r#"syntax = "proto3";
package helloworld;
service Greeter {
  rpc SayHello (HelloRequest) returns (HelloReply);
}
message HelloRequest { string name = 1; }
message HelloReply { string message = 1; }
"#;

/// grpc-go's greeter_server of scripts/setup listens on the fixed port 50051 of every interface
/// and takes no flags. To keep it off the machine's network and out of the way of anything else on
/// 50051, it runs (with the callbench that loads it) in a network namespace of its own when this
/// test may make one (root); otherwise on the machine's loopback, if 50051 is free.
const GREETER_PORT: u16 = 50051;

/// Runs `f` on a thread in a new network namespace with its loopback up (the processes it starts
/// are in it too); on the current network if that is not allowed. `f` is told which.
fn in_own_network<T: Send + 'static>(f: impl FnOnce(bool) -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        let isolated = unsafe { libc::unshare(libc::CLONE_NEWNET) } == 0;
        if isolated {
            assert!(loopback_up(), "could not bring up lo in a new network namespace");
        }
        f(isolated)
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `ip link set lo up`, by ioctl.
fn loopback_up() -> bool {
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            return false;
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (i, byte) in b"lo\0".iter().enumerate() {
            request.ifr_name[i] = *byte as libc::c_char;
        }
        let mut up = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut request) == 0;
        if up {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            up = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &request) == 0;
        }
        libc::close(fd);
        up
    }
}

#[test]
fn grpc_go_greeter_server_by_proto_file() {
    let greeter = installed("~/go/bin/greeter_server");
    in_own_network(move |isolated| {
        let addr = format!("127.0.0.1:{GREETER_PORT}");
        eprintln!("greeter_server in a network namespace of its own: {isolated}");
        if !isolated {
            assert!(
                std::net::TcpStream::connect(&addr).is_err(),
                "{addr} is taken: greeter_server listens only there (no network namespace without root)"
            );
        }
        let dir = TempDir::new("greeter");
        std::fs::write(dir.path("helloworld.proto"), HELLOWORLD_PROTO).unwrap();
        let server =
            Guard::spawn(Command::new(greeter).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()));
        assert!(common::wait_listening(&addr, Duration::from_secs(10)), "greeter_server did not listen on {addr}");
        let target = format!("grpc://{addr}/helloworld.Greeter/SayHello");
        let proto = dir.str("helloworld.proto");
        let call = ["-d", r#"{"name":"callbench"}"#, "--proto", &proto, "-I", &dir.str("")];

        let report = load_json(
            &[&call[..], &["-n", "300", "-c", "8", "--expect-body", r#"{"message":"Hello callbench"}"#, &target]]
                .concat(),
        );
        assert_all_ok(&report, 300);
        assert_eq!(report["protocol"], "grpc");
        assert_eq!(report["call"], "helloworld.Greeter/SayHello");
        assert_eq!(num(&report, "/connections_opened"), 1.0);
        // "callbench" in field 1; "Hello callbench" in field 1.
        assert_eq!(num(&report, "/payload_bytes_per_call/sent"), 11.0, "{report:#}");
        assert_eq!(num(&report, "/payload_bytes_per_call/received"), 17.0, "{report:#}");
        assert!(num(&report, "/wire_bytes_per_call/received") > 17.0);

        let wrong =
            load_json(&[&call[..], &["-n", "40", "--expect-body", r#"{"message":"Hello nobody"}"#, &target]].concat());
        assert_eq!(common::ok(&wrong), 0, "{wrong:#}");
        assert_eq!(wrong["errors"], json!({"validation": 40}), "{wrong:#}");

        // No --proto: it has no reflection to ask, and says so in one line.
        load_fails(&["-n", "5", "-d", r#"{"name":"x"}"#, &target], "reflection");
        drop(server);
    });
}

/// Messages that vary reach greeter_server, which logs each name it is sent: a template's per-call
/// values (the same for a seed), then an NDJSON file's messages in turn.
#[test]
fn grpc_go_greeter_server_gets_the_messages_of_a_template_and_of_lines_in_turn() {
    let greeter = installed("~/go/bin/greeter_server");
    in_own_network(move |isolated| {
        let addr = format!("127.0.0.1:{GREETER_PORT}");
        if !isolated {
            assert!(
                std::net::TcpStream::connect(&addr).is_err(),
                "{addr} is taken (no network namespace without root)"
            );
        }
        let dir = TempDir::new("greeter-data");
        std::fs::write(dir.path("helloworld.proto"), HELLOWORLD_PROTO).unwrap();
        std::fs::write(dir.path("names.ndjson"), "{\"name\": \"ann\"}\n{\"name\": \"bob\"}\n").unwrap();
        let log = std::fs::File::create(dir.path("greeter.log")).unwrap();
        let server = Guard::spawn(Command::new(greeter).stdin(Stdio::null()).stdout(Stdio::null()).stderr(log));
        assert!(common::wait_listening(&addr, Duration::from_secs(10)), "greeter_server did not listen on {addr}");
        let target = format!("grpc://{addr}/helloworld.Greeter/SayHello");
        let proto = ["--proto", &dir.str("helloworld.proto"), "-I", &dir.str("")];
        let template = ["--template", "-d", r#"{"name":"n{{call}}-{{uuid}}"}"#, "-n", "20", "-c", "4"];
        let report = load_json(&[&proto[..], &template[..], &[&target]].concat());
        assert_all_ok(&report, 20);
        assert_eq!(report["data"], json!({"kind": "per-call", "requests": 1, "template": true}));
        let lines = ["--data-lines", &dir.str("names.ndjson"), "-n", "4", "-c", "1"];
        assert_all_ok(&load_json(&[&proto[..], &lines[..], &[&target]].concat()), 4);
        // It logs a line per call as it answers: all 24 are there once the loads have ended.
        let names: Vec<String> = std::fs::read_to_string(dir.path("greeter.log"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once("Received: ").map(|(_, name)| name.to_string()))
            .collect();
        assert_eq!(names.len(), 24, "{names:?}");
        let mut calls: Vec<u64> = names[..20].iter().map(|n| n[1..n.find('-').unwrap()].parse().unwrap()).collect();
        calls.sort_unstable();
        assert_eq!(calls, (0..20).collect::<Vec<_>>(), "{names:?}");
        let uuids: std::collections::BTreeSet<&str> =
            names[..20].iter().map(|n| &n[n.find('-').unwrap() + 1..]).collect();
        assert_eq!(uuids.len(), 20, "a UUID per call: {names:?}");
        assert_eq!(names[20..], ["ann", "bob", "ann", "bob"]);
        drop(server);
    });
}

/// The folder of route_guide.proto as grpc-go published it in `module` (Go module cache, filled
/// by scripts/setup): v1.29.1's is proto3, the examples module's of 2026-08 edition 2023.
fn route_guide_proto_dir(module: &str) -> String {
    let cache = Command::new("go").args(["env", "GOMODCACHE"]).output().expect("go is not on PATH: run scripts/setup");
    let cache = String::from_utf8_lossy(&cache.stdout).trim().to_string();
    let dir = format!("{cache}/{module}/route_guide/routeguide");
    installed(&format!("{dir}/route_guide.proto"));
    dir
}

const ROUTE_GUIDE_PROTO3: &str = "google.golang.org/grpc@v1.29.1/examples";
const ROUTE_GUIDE_EDITION_2023: &str = "google.golang.org/grpc/examples@v0.0.0-20260825154716-030ee8becb20";

/// grpc-go's route_guide example server (scripts/setup), by its proto as published: a method of
/// each kind. Its RouteChat answers each note with every note at that place so far, this one
/// included: three notes at one place bring 1 + 2 + 3 answers, and three more 4 + 5 + 6.
#[test]
fn grpc_go_route_guide_calls_of_every_kind() {
    let proto_dir = route_guide_proto_dir(ROUTE_GUIDE_PROTO3);
    let proto = format!("{proto_dir}/route_guide.proto");
    route_guide_calls_of_every_kind(vec!["--proto".into(), proto, "-I".into(), proto_dir]);
}

/// The same calls described by the route_guide.proto grpc-go's examples publish now, written in
/// edition 2023 (`option features.field_presence = IMPLICIT;`).
#[test]
fn grpc_go_route_guide_by_its_edition_2023_proto() {
    let proto_dir = route_guide_proto_dir(ROUTE_GUIDE_EDITION_2023);
    let published = std::fs::read_to_string(format!("{proto_dir}/route_guide.proto")).unwrap();
    assert!(published.contains("edition = \"2023\";"), "the examples' proto is an Editions file");
    let proto = format!("{proto_dir}/route_guide.proto");
    route_guide_calls_of_every_kind(vec!["--proto".into(), proto, "-I".into(), proto_dir]);
}

/// The same calls described by a protoset that a current protoc (33.2) compiled from that edition
/// 2023 file: its descriptors say `syntax = "editions"` and carry the features as options.
#[test]
fn grpc_go_route_guide_by_a_protoset_of_its_edition_2023_proto() {
    let proto_dir = route_guide_proto_dir(ROUTE_GUIDE_EDITION_2023);
    let protoc = installed("~/.local/bin/protoc-4.33.2");
    let dir = TempDir::new("route-guide-protoset");
    let protoset = dir.str("route_guide.protoset");
    let made = Command::new(protoc)
        .args(["-I", &proto_dir, "--include_imports", &format!("--descriptor_set_out={protoset}"), "route_guide.proto"])
        .current_dir(&proto_dir)
        .output()
        .unwrap();
    assert!(made.status.success(), "protoc: {}", String::from_utf8_lossy(&made.stderr));
    route_guide_calls_of_every_kind(vec!["--protoset".into(), protoset]);
}

/// The same edition 2023 file learnt by reflection: grpcio-reflection (in python-grpcio's venv,
/// scripts/setup) answers with the file as grpcio-tools' protoc compiled it, `syntax =
/// "editions"`. No stock server here serves reflection of an Editions file, so a few lines of
/// grpcio (stock/route_guide_reflection.py) serve it, with a unary and a client-streaming method.
#[test]
fn grpcio_reflection_of_grpc_go_route_guide_edition_2023_proto() {
    let proto_dir = route_guide_proto_dir(ROUTE_GUIDE_EDITION_2023);
    // The servers' builds sit beside the release binaries, under cargo's target directory.
    let release = std::path::Path::new(common::callbench()).parent().unwrap();
    let python = installed(&release.join("../servers/python-grpcio/venv/bin/python").to_string_lossy());
    let gen = TempDir::new("route-guide-reflection");
    let made = Command::new(&python)
        .args(["-m", "grpc_tools.protoc", "-I", &proto_dir, "--python_out", &gen.str(""), "--grpc_python_out"])
        .args([&gen.str(""), "route_guide.proto"])
        .output()
        .unwrap();
    assert!(made.status.success(), "grpc_tools.protoc: {}", String::from_utf8_lossy(&made.stderr));
    let script = std::path::Path::new(
        &std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"),
    )
    .join("tests/e2e/stock/route_guide_reflection.py");
    let mut server =
        Guard::spawn(Command::new(&python).arg(&script).arg(gen.str("")).stdin(Stdio::null()).stdout(Stdio::piped()));
    let mut line = String::new();
    BufReader::new(server.child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let (port, syntax) = line.trim().split_once(' ').unwrap_or_else(|| panic!("the server printed {line:?}"));
    assert_eq!(syntax, "editions", "the file reflection serves is an Editions file");
    let method = |name: &str| format!("grpc://127.0.0.1:{port}/routeguide.RouteGuide/{name}");

    let point = r#"{"latitude": 407838351, "longitude": -746143763}"#;
    let feature = format!(r#"{{"name": "407838351,-746143763", "location": {point}}}"#);
    let got = load_json(&["-n", "40", "-c", "2", "-d", point, "--expect-body", &feature, &method("GetFeature")]);
    assert_all_ok(&got, 40);
    assert_eq!(got["call"], "routeguide.RouteGuide/GetFeature", "{got:#}");

    let route = gen.path("route.ndjson");
    std::fs::write(&route, format!("{point}\n{point}\n{point}\n")).unwrap();
    let data = format!("@{}", route.display());
    let summary = r#"{"pointCount": 3}"#;
    let recorded = load_json(&["-n", "20", "-d", &data, "--expect-body", summary, &method("RecordRoute")]);
    assert_all_ok(&recorded, 20);
    assert_eq!(num(&recorded, "/stream/messages_per_call/sent"), 3.0, "{recorded:#}");
    drop(server);
}

/// Every kind of call route_guide_server answers, described by `described` (`--proto …` or
/// `--protoset …`).
fn route_guide_calls_of_every_kind(described: Vec<String>) {
    let server = installed("~/go/bin/route_guide_server");
    in_own_network(move |isolated| {
        let port = match isolated {
            true => 10000,
            false => std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port(),
        };
        let addr = format!("127.0.0.1:{port}");
        let _server = Guard::spawn(
            Command::new(server)
                .args(["-port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        assert!(common::wait_listening(&addr, Duration::from_secs(10)), "route_guide_server did not listen on {addr}");
        let described: Vec<&str> = described.iter().map(String::as_str).collect();
        let method = |name: &str| format!("grpc://{addr}/routeguide.RouteGuide/{name}");
        let dir = TempDir::new("route-guide");
        let ndjson = |name: &str, line: &str| {
            std::fs::write(dir.path(name), format!("{line}\n{line}\n{line}\n")).unwrap();
            format!("@{}", dir.str(name))
        };
        let patriots_path = r#"{"latitude": 407838351, "longitude": -746143763}"#;

        let feature = format!(r#"{{"name": "Patriots Path, Mendham, NJ 07945, USA", "location": {patriots_path}}}"#);
        let unary = ["-n", "40", "-c", "2", "-d", patriots_path, "--expect-body", &feature];
        assert_all_ok(&load_json(&[&described[..], &unary[..], &[&method("GetFeature")]].concat()), 40);

        let rectangle = r#"{"lo": {"latitude": 400000000, "longitude": -750000000},
                            "hi": {"latitude": 420000000, "longitude": -730000000}}"#;
        let listed = load_json(&[&described[..], &["-n", "20", "-d", rectangle, &method("ListFeatures")]].concat());
        assert_all_ok(&listed, 20);
        assert_eq!(num(&listed, "/stream/messages_per_call/sent"), 1.0, "{listed:#}");
        assert!(num(&listed, "/stream/messages_per_call/received") > 10.0, "{listed:#}");

        // The same point three times: no distance, three features passed.
        let route = ndjson("route.ndjson", patriots_path);
        let summary = r#"{"pointCount": 3, "featureCount": 3}"#;
        let recorded = load_json(
            &[&described[..], &["-n", "20", "-c", "2", "-d", &route, "--expect-body", summary, &method("RecordRoute")]]
                .concat(),
        );
        assert_all_ok(&recorded, 20);
        assert_eq!(num(&recorded, "/stream/messages_per_call/sent"), 3.0, "{recorded:#}");
        assert_eq!(num(&recorded, "/stream/messages_per_call/received"), 1.0, "{recorded:#}");

        let notes = ndjson("notes.ndjson", r#"{"location": {"latitude": 5, "longitude": 5}, "message": "here"}"#);
        for (pace, answers) in [("burst", 6.0), ("ping-pong", 15.0)] {
            let chat = ["-n", "1", "-d", &notes, "--stream-pace", pace, &method("RouteChat")];
            let chatted = load_json(&[&described[..], &chat[..]].concat());
            assert_all_ok(&chatted, 1);
            assert_eq!(num(&chatted, "/stream/messages_per_call/sent"), 3.0, "{pace}: {chatted:#}");
            assert_eq!(num(&chatted, "/stream/messages_per_call/received"), answers, "{pace}: {chatted:#}");
        }
    });
}
