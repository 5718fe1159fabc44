//! End-to-end: how `callbench load` holds many connections, and what it says when it cannot open
//! them: memory that grows with the connections, not the callers' bookkeeping; callers that never
//! got a connection end the run with one line naming why and exit 1, the measured part still written.

use crate::common;

use common::{start, Run, TempDir};
use serde_json::Value;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// A listener whose queue holds one connection, the probe `callbench load` makes before a run, and
/// that never accepts it. With `close`, it is closed once the probe has come and gone (its queued
/// socket closed by the client): every connect after that is refused (one whose SYN came before was
/// dropped by the full queue, and is refused when sent again). Without, it stays open, full, until the
/// returned sender is dropped: every later connect waits.
fn one_connection_server(close: bool) -> (u16, std::sync::mpsc::Sender<()>) {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // SAFETY: listen(2) again on a listening socket sets its backlog: 0 queues one connection.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if close {
            // The kernel's state of the queued socket, read every 10 ms until the test ends.
            while !closed_by_client(port) {
                match wait.recv_timeout(Duration::from_millis(10)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            }
            drop(listener);
        }
        let _ = wait.recv(); // the test is over (its sender dropped)
    });
    (port, done)
}

/// Whether a socket on local `port` is in CLOSE_WAIT: its client connected and closed.
fn closed_by_client(port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let local = fields.get(1).and_then(|l| l.rsplit(':').next()).and_then(|p| u16::from_str_radix(p, 16).ok());
        local == Some(port) && fields.get(3) == Some(&"08")
    })
}

fn report_in(dir: &TempDir) -> Value {
    let text = std::fs::read_to_string(dir.path("r.json")).expect("the measured part is written");
    let report: Value = serde_json::from_str(&text).expect("a whole JSON file");
    common::validate(&report);
    report
}

#[test]
fn callers_refused_a_connection_end_the_run_with_one_line_and_exit_1() {
    let (port, _server) = one_connection_server(true);
    let dir = TempDir::new("refused");
    let url = format!("http://127.0.0.1:{port}/");
    let run = common::load(&["-c", "20", "-z", "500ms", "-q", "-o", "json", "--out", &dir.str("r.json"), &url]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(&run, "20 of 20 callers never got a connection in the run: ");
    assert!(run.stderr.contains("refused by the server"), "{}", run.all());
    let report = report_in(&dir);
    assert_eq!(report["callers_never_connected"], 20, "{report:#}");
    assert!(report["connect_failures"]["refused"].as_u64().unwrap() >= 20, "{report:#}");
    assert_eq!((report["connections_opened"].as_u64(), report["calls"]["ok"].as_u64()), (Some(0), Some(0)));
}

#[test]
fn callers_whose_connects_time_out_say_so() {
    let (port, _server) = one_connection_server(false);
    let dir = TempDir::new("timed-out");
    let url = format!("http://127.0.0.1:{port}/");
    let args =
        ["-c", "20", "-z", "500ms", "--connect-timeout", "300ms", "-q", "-o", "json", "--out", &dir.str("r.json")];
    let run = common::load(&[&args[..], &[url.as_str()]].concat());
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(&run, "20 of 20 callers never got a connection in the run: ");
    assert!(run.stderr.contains("timed out (not open within --connect-timeout"), "{}", run.all());
    let report = report_in(&dir);
    assert_eq!(report["callers_never_connected"], 20, "{report:#}");
    assert!(report["connect_failures"]["timed_out"].as_u64().unwrap() >= 20, "{report:#}");
    assert!(run.elapsed < Duration::from_secs(8), "bounded by the run and its timeouts: {}", run.all());
}

/// `callbench load` with its open-files limit set to `limit` (soft and hard) before it starts.
fn load_with_open_files(limit: u64, args: &[&str]) -> Run {
    let mut cmd = Command::new(common::callbench());
    cmd.arg("load").args(args);
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &l) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    common::run_cmd(&mut cmd)
}

#[test]
fn more_connections_than_the_open_files_limit_are_refused_before_any_connect() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    let run = load_with_open_files(100, &["-c", "200", "-z", "1s", &url]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(&run, "200 connections need about 264 open files, above this process's hard limit of 100");
    assert!(run.stderr.contains("ulimit -n"), "{}", run.all());
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("something connected before the refusal: {other:?}"),
    }
}

#[test]
fn a_soft_limit_below_the_run_is_raised_to_it() {
    let actix = start("rust-actix", &[]);
    let url = format!("http://{}/students", actix.addr);
    // Soft 256, hard 4096: 600 connections fit once the soft limit is raised.
    let mut cmd = Command::new(common::callbench());
    cmd.args(["load", "-c", "600", "-n", "3000", "-o", "json", "-q", &url]);
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let l = libc::rlimit { rlim_cur: 256, rlim_max: 4096 };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &l) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let run = common::run_cmd(&mut cmd);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    common::assert_all_ok(&report, 3000);
    assert_eq!(report["connections_opened"], 600, "{report:#}");
}

/// Two thousand connections (HTTP/1.1), and two thousand streams on ten HTTP/2 connections: every
/// caller connects and has calls answered, and the memory is the connections', not the callers'
/// bookkeeping (each caller held 1.1 MB of histograms before: 2.2 GB here).
#[test]
fn thousands_of_callers_all_connect_and_hold_kilobytes_each() {
    let actix = start("rust-actix", &[]);
    let url = format!("http://{}/students", actix.addr);
    for (args, connections) in
        [(vec!["-c", "2000", "-z", "2s"], 2000), (vec!["--http2", "-c", "2000", "--connections", "10", "-z", "2s"], 10)]
    {
        let m = common::hostile::measured_load(&[&args[..], &[url.as_str()]].concat());
        assert_eq!(m.run.code, Some(0), "{}", m.run.all());
        let r = &m.report;
        assert_eq!(
            (r["connections_opened"].as_u64(), r["callers_never_connected"].as_u64()),
            (Some(connections), Some(0))
        );
        assert_eq!(r["callers_answered"], 2000, "every caller had calls answered: {r:#}");
        assert_eq!(common::failed(r), 0, "{r:#}");
        // How long opening took depends on the server's accept queue (a full one drops SYNs, sent
        // again a second later): reported, not bounded here.
        assert!(r["callers_connected_s"].as_f64().is_some(), "{r:#}");
        // 2000 callers at 16 KiB each and 48 MiB for the rest: far below the 2 GB of a caller's own histograms.
        assert!(m.peak_rss_kib < 2000 * 16 + 48 * 1024, "peak RSS {} KiB: {r:#}", m.peak_rss_kib);
    }
}

/// A ramp spreads the callers' starts (and first connects) over its span.
#[test]
fn a_ramp_starts_the_callers_over_its_span() {
    let actix = start("rust-actix", &[]);
    let url = format!("http://{}/students", actix.addr);
    let report = common::load_json(&["-c", "20", "--ramp", "1s", "-z", "1500ms", &url]);
    let by = report["callers_connected_s"].as_f64().unwrap();
    // The last caller starts at 19/20 of the ramp.
    assert!((0.95..1.5).contains(&by), "{report:#}");
    assert_eq!(report["callers_answered"], 20, "{report:#}");
}
