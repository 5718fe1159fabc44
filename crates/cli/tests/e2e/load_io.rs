//! End-to-end: `callbench load --io uring` and `--io epoll` against the reference servers, every
//! protocol the sockets carry: the same calls succeed, the same bytes cross the wire, and the report
//! says which interface drove the sockets. (scripts/test also runs the other load tests with
//! CALLBENCH_IO=uring.)

use crate::common;

use common::{assert_all_ok, load, load_json, num, start};
use serde_json::Value;

/// Whether this kernel lets callbench use io_uring: `--io auto` says what it chose.
fn uring_here(target: &str) -> bool {
    let auto = load_json(&["-n", "1", "-c", "1", "--io", "auto", target]);
    auto["settings"]["io"] == "io_uring"
}

/// The same load over both interfaces: all calls ok over each, with equal bytes per call.
fn both(args: &[&str], calls: u64) -> (Value, Value) {
    let over = |io: &str| {
        let report = load_json(&[&["--io", io][..], args].concat());
        assert_all_ok(&report, calls);
        assert_eq!(report["settings"]["io"], if io == "uring" { "io_uring" } else { "epoll" }, "{report:#}");
        report
    };
    let (epoll, uring) = (over("epoll"), over("uring"));
    assert_eq!(epoll["payload_bytes_per_call"], uring["payload_bytes_per_call"], "{args:?}");
    for side in ["sent", "received"] {
        let pointer = format!("/wire_bytes_per_call/{side}");
        let (e, u) = (num(&epoll, &pointer), num(&uring, &pointer));
        // The same requests and answers; only a header such as the date may differ by a byte.
        assert!((e - u).abs() <= 0.01 * e + 2.0, "{side}: epoll {e} B, io_uring {u} B a call ({args:?})");
    }
    (epoll, uring)
}

#[test]
fn every_protocol_runs_over_io_uring_as_over_epoll() {
    let actix = start("rust-actix", &[]);
    let http = format!("http://{}", actix.addr);
    if !uring_here(&http) {
        eprintln!("skipped: io_uring is not available to this process");
        return;
    }
    let checked = ["--workload", "students", "--check"];
    both(&[&["-n", "2000", "-c", "20"][..], &checked, &[&http]].concat(), 2000);
    // Bodies larger than one receive (16 KiB) and one send: the echo of 100 kB, checked byte for byte.
    let big = ["-n", "200", "-c", "4", "--workload", "echo", "--payload-size", "100000", "--check", http.as_str()];
    both(&big, 200);
    let fresh = ["-n", "100", "-c", "4", "--new-connection-per-call", "--workload", "students", http.as_str()];
    let (_, uring) = both(&fresh, 100);
    assert_eq!(num(&uring, "/connections_opened"), 100.0);

    let axum = start("rust-axum", &[]);
    let h2 = format!("http://{}", axum.addr);
    both(&[&["--http2", "--connections", "2", "--streams", "8", "-n", "2000"][..], &checked, &[&h2]].concat(), 2000);

    let tonic = start("rust-tonic", &[]);
    let grpc = format!("grpc://{}", tonic.addr);
    both(&[&["--connections", "2", "--streams", "8", "-n", "2000"][..], &checked, &[&grpc]].concat(), 2000);

    let echo = start("raw-echo", &[]);
    let raw = format!("raw://{}?size=3000", echo.addr);
    let (_, uring) = both(&["-n", "3000", "-c", "30", &raw], 3000);
    assert_eq!(num(&uring, "/wire_bytes_per_call/sent"), 3000.0, "{uring:#}");
    // A timed run, open loop: the rate is kept over io_uring too.
    let open = load_json(&["--io", "uring", "-z", "1s", "--rate", "2000", "-c", "10", &raw]);
    let achieved = num(&open, "/throughput_per_s");
    assert!((achieved / 2000.0 - 1.0).abs() < 0.05, "{achieved} calls/s of 2000: {open:#}");
}

#[test]
fn the_text_report_names_io_uring_and_a_bad_choice_is_one_line() {
    let echo = start("raw-echo", &[]);
    let raw = format!("raw://{}", echo.addr);
    if !uring_here(&raw) {
        eprintln!("skipped: io_uring is not available to this process");
        return;
    }
    let run = load(&["-n", "100", "-c", "2", "--io", "uring", &raw]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stdout.contains("2 connection(s) over io_uring"), "{}", run.all());
    let plain = load(&["-n", "100", "-c", "2", "--io", "epoll", &raw]);
    assert!(!plain.stdout.contains("io_uring"), "epoll, the default, goes unsaid: {}", plain.all());
    let bad = load(&["-n", "1", "--io", "kqueue", &raw]);
    assert_eq!(bad.code, Some(2), "a usage error: {}", bad.all());
    common::assert_one_line(&bad, "epoll, uring or auto");
    let mut cmd = std::process::Command::new(common::callbench());
    cmd.env("CALLBENCH_IO", "select").args(["load", "-n", "1", &raw]);
    let bad_env = common::run_cmd(&mut cmd);
    assert_eq!(bad_env.code, Some(1), "{}", bad_env.all());
    common::assert_one_line(&bad_env, "CALLBENCH_IO: unknown I/O interface \"select\"");
}

/// `callbench load` with io_uring refused the way container runtimes refuse it (Docker's default
/// seccomp profile answers `io_uring_setup` with EPERM): a seccomp filter installed in the child.
fn load_without_io_uring(args: &[&str]) -> common::Run {
    use std::os::unix::process::CommandExt;
    // Classic BPF: load the syscall's number, return EPERM for io_uring_setup, allow the rest.
    let filter = [
        libc::sock_filter { code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, jt: 0, jf: 0, k: 0 },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_io_uring_setup as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        libc::sock_filter { code: (libc::BPF_RET | libc::BPF_K) as u16, jt: 0, jf: 0, k: libc::SECCOMP_RET_ALLOW },
    ];
    let mut cmd = std::process::Command::new(common::callbench());
    cmd.arg("load").args(args);
    // SAFETY: two prctl calls between fork and exec (async-signal-safe); `program` points into
    // the closure's own copy of `filter`.
    unsafe {
        cmd.pre_exec(move || {
            let program = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut _ };
            let no_new_privs = libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            let seccomp = libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &program as *const _);
            if no_new_privs != 0 || seccomp != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    common::run_cmd(&mut cmd)
}

#[test]
fn auto_falls_back_to_epoll_where_the_kernel_refuses_io_uring() {
    let echo = start("raw-echo", &[]);
    let raw = format!("raw://{}", echo.addr);
    let auto = load_without_io_uring(&["-n", "500", "-c", "5", "--io", "auto", "-o", "json", &raw]);
    assert_eq!(auto.code, Some(0), "{}", auto.all());
    let report: Value = serde_json::from_str(&auto.stdout).expect("load's JSON");
    assert_all_ok(&report, 500);
    assert_eq!(report["settings"]["io"], "epoll", "the fallback is recorded: {report:#}");
    let why = report["settings"]["io_why"].as_str().unwrap_or_default();
    assert!(why.starts_with("epoll: io_uring is not available"), "and why: {report:#}");
    // Asked for by name, io_uring refused is an error that says why, not a silent epoll run.
    let forced = load_without_io_uring(&["-n", "1", "--io", "uring", &raw]);
    assert_ne!(forced.code, Some(0), "{}", forced.all());
    common::assert_one_line(&forced, "io_uring is not available");
}

/// Calls per second of a 1 s closed loop over `io`, and the reason the report gives for it.
fn closed_loop(io: &str, concurrency: &str, target: &str) -> (f64, String) {
    let report = load_json(&["--io", io, "-z", "1s", "-c", concurrency, target]);
    let why = report["settings"]["io_why"].as_str().unwrap_or_default().to_string();
    (num(&report, "/throughput_per_s"), why)
}

#[test]
fn io_uring_keeps_up_with_epoll_in_a_closed_loop() {
    // What a ring whose completions wait for a timer or another wake-up looks like: a small
    // fraction of epoll's calls (109 against 13,707, under 0.01×, on the kernel that had it). A
    // ratio within one run, the two interleaved, run alone (.config/nextest.toml), so a busy
    // machine slows both alike; the bound leaves room for noise (0.36× once beside other tests).
    let actix = start("rust-actix", &[]);
    let http = format!("http://{}/students", actix.addr);
    if !uring_here(&http) {
        eprintln!("skipped: io_uring is not available to this process");
        return;
    }
    for concurrency in ["1", "4"] {
        let (mut epoll, mut uring) = (0.0, 0.0);
        let mut why = String::new();
        for _ in 0..2 {
            epoll += closed_loop("epoll", concurrency, &http).0;
            let (calls, said) = closed_loop("uring", concurrency, &http);
            uring += calls;
            why = said;
        }
        assert!(why.starts_with("io_uring: completions"), "the report says how: {why}");
        let ratio = uring / epoll;
        assert!(ratio > 0.25, "-c {concurrency}: io_uring made {ratio:.2}× epoll's calls per second ({why})");
    }
}
