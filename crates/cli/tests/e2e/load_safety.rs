//! End-to-end: what `callbench load` refuses, and how: targets off this machine (before any
//! connection), unreachable ports, bad flags — always a short error, a non-zero exit, no panic.

use crate::common;

use common::{load, load_fails, start, Run};
use std::net::{IpAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

fn assert_refused_remote(run: &Run) {
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(run, "--allow-remote");
    assert!(run.elapsed < Duration::from_secs(2), "refusing must not wait for anything: {}", run.all());
    assert!(run.stdout.is_empty(), "{}", run.all());
}

#[test]
fn targets_off_loopback_are_refused_before_connecting() {
    for target in [
        "http://10.1.2.3/",
        "http://192.0.2.1:8080/students",
        "https://192.0.2.1/",
        "http://[::ffff:10.1.2.3]:80/",
        "http://[2001:db8::1]:80/",
        "grpc://10.1.2.3:50051/callbench.v1.Life/Setup",
    ] {
        assert_refused_remote(&load(&["-n", "1", target]));
    }
    assert_refused_remote(&load(&["-n", "1", "--http2", "http://10.1.2.3/"]));
    assert_refused_remote(&load(&["-n", "1", "--workload", "auth", "-k", "grpcs://192.0.2.1:443"]));
    assert_refused_remote(&load(&["-n", "1", "--slo", "p99<1ms", "http://192.0.2.1/"]));
}

/// 0.0.0.0 is not a loopback address, although connecting to it reaches this machine: a listener
/// on 127.0.0.1 would see the connection. It must see none.
#[test]
fn the_unspecified_address_is_refused_and_nothing_connects() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for args in [
        vec!["-n".to_string(), "1".into(), format!("http://0.0.0.0:{port}/")],
        vec!["-n".into(), "1".into(), "--http2".into(), format!("http://0.0.0.0:{port}/")],
        vec!["-n".into(), "1".into(), "--workload".into(), "auth".into(), format!("grpc://0.0.0.0:{port}")],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_refused_remote(&load(&args));
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("something connected to the listener: {other:?}"),
    }
}

/// A name that resolves off this machine is refused like its address. Offline machines may have
/// no such name: then this only checks that names resolving to loopback are accepted.
#[test]
fn names_are_judged_by_what_they_resolve_to() {
    let actix = start("rust-actix", &[]);
    let report = common::load_json(&["-n", "5", "-c", "1", &format!("http://localhost:{}/students", actix.port())]);
    common::assert_all_ok(&report, 5);
    // Each new connection looks the name up again (its rule checked again), its time the cold call's first phase.
    let url = format!("http://localhost:{}/students", actix.port());
    let cold = common::load_json(&["-n", "5", "-c", "1", "--new-connection-per-call", &url]);
    common::assert_all_ok(&cold, 5);
    assert_eq!(cold["settings"]["name_lookup"], "per-connection", "{cold:#}");
    assert!(common::num(&cold, "/cold_calls/name_lookup_us/p50") > 0.0, "{cold:#}");
    let address = common::load_json(&["-n", "2", "--new-connection-per-call", &url.replace("localhost", "127.0.0.1")]);
    assert_eq!(address["settings"]["name_lookup"], "none", "{address:#}");
    assert!(address["cold_calls"].get("name_lookup_us").is_none(), "{address:#}");

    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
    let candidates: Vec<String> = [hostname].into_iter().filter(|h| !h.is_empty()).collect();
    let mut checked = false;
    for name in candidates {
        // Resolution is bounded: a thread that may be left behind, not a hung test.
        let (tx, rx) = std::sync::mpsc::channel();
        let lookup = format!("{name}:80");
        std::thread::spawn(move || {
            let _ = tx.send(lookup.to_socket_addrs().map(|a| a.map(|a| a.ip()).collect::<Vec<IpAddr>>()));
        });
        let Ok(Ok(addrs)) = rx.recv_timeout(Duration::from_secs(3)) else { continue };
        if addrs.is_empty() || addrs.iter().any(|ip| ip.is_loopback()) {
            continue;
        }
        assert_refused_remote(&load(&["-n", "1", &format!("http://{name}/")]));
        checked = true;
    }
    if !checked {
        eprintln!("no name resolving off loopback on this machine: that case is not checked");
    }
    // A name that does not resolve: one line, quickly.
    let run = load_fails(&["-n", "1", "http://no-such-host.invalid/"], "no-such-host.invalid");
    assert!(run.elapsed < Duration::from_secs(10), "{}", run.all());
}

#[test]
fn an_unreachable_loopback_port_is_one_line() {
    let port = common::free_port();
    for args in [
        vec!["-n".to_string(), "5".into(), format!("http://127.0.0.1:{port}/")],
        vec!["-n".into(), "5".into(), "--http2".into(), format!("http://127.0.0.1:{port}/")],
        vec!["-n".into(), "5".into(), "-k".into(), format!("https://127.0.0.1:{port}/")],
        vec!["-n".into(), "5".into(), "--workload".into(), "auth".into(), format!("grpc://127.0.0.1:{port}")],
        vec![
            "-n".into(),
            "5".into(),
            "-d".into(),
            "{}".into(),
            format!("grpc://127.0.0.1:{port}/callbench.v1.Life/Setup"),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = load_fails(&args, &format!("127.0.0.1:{port}"));
        assert!(run.stderr.contains("cannot connect"), "{}", run.all());
        assert!(run.elapsed < Duration::from_secs(5), "{}", run.all());
    }
}

/// Mistakes found after the flags parse: one line `callbench: error: …`, exit 1.
#[test]
fn bad_settings_are_one_line() {
    let actix = start("rust-actix", &[]);
    let tonic = start("rust-tonic", &[]);
    let http = format!("http://{}/students", actix.addr);
    let grpc = format!("grpc://{}/callbench.v1.Life/Setup", tonic.addr);
    let no_method = format!("grpc://{}", tonic.addr);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-c", "0", &http], "-c must be at least 1"),
        (vec!["-n", "0", &http], "-n must be at least 1"),
        (vec!["-z", "0s", &http], "-z"),
        (vec!["--connections", "0", &http], "at least 1"),
        (vec!["--rate", "0", &http], "--rate"),
        (vec!["--rate", "100", "--rate-shape", "100@1s", &http], "not both"),
        (vec!["--rate-shape", "fast", &http], "fast"),
        (vec!["--slo", "banana", &http], "banana"),
        (vec!["--slo", "p99<10ms", "-n", "5", &http], "-z"),
        (vec!["--streams", "2", &http], "--streams"),
        (vec!["-c", "2", "--connections", "3", &http], "--connections 3"),
        (vec!["--http2", "-c", "3", "--connections", "2", "--streams", "2", &http], "disagrees"),
        (vec!["--workload", "nope", &http], "nope"),
        (vec!["--workload", "students", "-d", "{}", &http], "--workload"),
        (vec!["--check", &http], "--check"),
        (vec!["--threads", "0", &http], "--threads"),
        (vec!["--proto", "contract/proto/callbench/v1/life.proto", &http], "--proto"),
        (vec!["-d", "@/no/such/file", &http], "/no/such/file"),
        (vec!["--http2", &grpc], "--http2"),
        (vec!["-X", "GET", &grpc], "-X"),
        (vec!["--expect-status", "200", &grpc], "--expect-status"),
        (vec!["--proto", "/no/such.proto", &grpc], "/no/such.proto"),
        (vec!["--protoset", "/no/such.protoset", &grpc], "/no/such.protoset"),
        (vec![&no_method], "name the method"),
        (vec!["ftp://127.0.0.1:21/"], "ftp"),
        (vec!["http://127.0.0.1:99999/"], "99999"),
        (vec!["127.0.0.1:8080"], "127.0.0.1:8080"),
    ];
    for (args, needle) in cases {
        let run = load_fails(&args, needle);
        assert!(run.stderr.starts_with("callbench: error: "), "{}", run.all());
        assert!(run.stdout.is_empty(), "{}", run.all());
        assert!(run.elapsed < Duration::from_secs(5), "{}", run.all());
    }
}

/// Flags that do not parse are refused by the parser: exit 2, one line that says what is wrong,
/// nothing started.
#[test]
fn flags_that_do_not_parse_are_refused() {
    let target = "http://127.0.0.1:9/";
    for (args, needle) in [
        (vec!["-z", "banana", target], "banana"),
        (vec!["--rate=-5", target], "-5"),
        (vec!["--rate", "-5", target], "-5"),
        (vec!["-o", "xml", target], "xml"),
        (vec!["-H", "no-colon", target], "no-colon"),
        (vec!["-c", "many", target], "many"),
        (vec!["--no-such-flag", target], "--no-such-flag"),
        (vec![], "required arguments"),
    ] {
        let run = load(&args);
        assert_eq!(run.code, Some(2), "{args:?}:\n{}", run.all());
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}:\n{}", run.all());
        assert!(
            run.stderr.starts_with("callbench: error: ") && run.stderr.contains(needle),
            "{args:?}:\n{}",
            run.all()
        );
        assert!(run.stdout.is_empty(), "{}", run.all());
    }
}

/// A server that accepts connections and never answers: calls end as timeouts, the run ends.
#[test]
fn a_server_that_never_answers_times_out() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let held = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            let started = std::time::Instant::now();
            while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(60) {
                match listener.accept() {
                    Ok((stream, _)) => held.push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        })
    };
    for args in [
        vec![
            "-n".to_string(),
            "6".into(),
            "-c".into(),
            "2".into(),
            "--timeout".into(),
            "200ms".into(),
            format!("http://{addr}/"),
        ],
        vec![
            "-n".into(),
            "6".into(),
            "-c".into(),
            "2".into(),
            "--timeout".into(),
            "200ms".into(),
            "--http2".into(),
            format!("http://{addr}/"),
        ],
        vec![
            "-n".into(),
            "6".into(),
            "-c".into(),
            "2".into(),
            "--timeout".into(),
            "200ms".into(),
            "--workload".into(),
            "auth".into(),
            format!("grpc://{addr}"),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = load(&[&["-o", "json"], &args[..]].concat());
        assert_eq!(run.code, Some(1), "no call succeeded: {}", run.all());
        let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("a JSON report");
        common::validate(&report);
        assert_eq!(report["errors"], serde_json::json!({"timeout": 6}), "{report:#}");
        assert!(common::num(&report, "/latency_us/min") >= 200_000.0, "{report:#}");
        assert!(run.elapsed < Duration::from_secs(5), "{}", run.all());
        assert!(run.stderr.contains("every call failed: 6 (timeout ×6)"), "{}", run.all());
    }
    stop.store(true, Ordering::Relaxed);
    held.join().unwrap();
}
