//! End-to-end: no server outlives callbench, whether it is stopped by Ctrl-C
//! during `serve` or in the middle of a `verify` flood.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else { continue };
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.extend(entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()));
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The child of `parent` running the server binary `name` (not the build that precedes it).
fn wait_for_server(parent: &mut Child, name: &str, timeout: Duration) -> u32 {
    let deadline = Instant::now() + timeout;
    loop {
        let suffix = format!("/{name}");
        let server = children_of(parent.id())
            .into_iter()
            .find(|&pid| command_line(pid).split_whitespace().next().is_some_and(|program| program.ends_with(&suffix)));
        if let Some(pid) = server {
            return pid;
        }
        assert!(parent.try_wait().unwrap().is_none(), "callbench ended before starting a server");
        assert!(Instant::now() < deadline, "no server started within {timeout:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn interrupt(child: &Child) {
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("callbench did not exit within 10 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `callbench serve rust-axum` once it said it is ready: the process, the server's address and
/// the rest of its stderr.
fn serve_axum() -> (Child, String, BufReader<std::process::ChildStderr>) {
    let mut cli = Command::new(env!("CARGO_BIN_EXE_callbench"))
        .args(["serve", "rust-axum", "--no-build"])
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(cli.stderr.take().unwrap());
    let mut line = String::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !line.contains("ready at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve ended before it was ready");
        assert!(Instant::now() < deadline);
    }
    let addr = line.split("http://").nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    (cli, addr, stderr)
}

#[test]
fn ctrl_c_during_serve_stops_the_server() {
    let (mut cli, addr, _stderr) = serve_axum();
    let server = wait_for_server(&mut cli, "rust-axum", Duration::from_secs(5));
    assert!(std::net::TcpStream::connect(&addr).is_ok());
    interrupt(&cli);
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(130));
    assert!(!alive(server), "server {server} outlived callbench serve");
    assert!(std::net::TcpStream::connect(&addr).is_err(), "{addr} still accepts connections");
}

/// A caller that stopped reading (a script killed, a pipe closed) must not keep the server
/// alive: printing to a closed stderr once made the signal's handler fail before it stopped
/// anything, and serve then ignored every further SIGTERM.
#[test]
fn sigterm_during_serve_stops_the_server_when_nobody_reads_its_stderr() {
    let (mut cli, addr, stderr) = serve_axum();
    let server = wait_for_server(&mut cli, "rust-axum", Duration::from_secs(5));
    drop(stderr);
    unsafe {
        libc::kill(cli.id() as i32, libc::SIGTERM);
    }
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(143));
    assert!(!alive(server), "server {server} outlived callbench serve");
    assert!(std::net::TcpStream::connect(&addr).is_err(), "{addr} still accepts connections");
}

#[test]
fn ctrl_c_during_verify_stops_the_server() {
    let mut cli = Command::new(env!("CARGO_BIN_EXE_callbench"))
        .args(["verify", "rust-tonic", "--no-build", "--flood", "1000000"])
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = wait_for_server(&mut cli, "rust-tonic", Duration::from_secs(300));
    // In the flood: its 8 keep-alive connections are open (two rounds of a million bad requests
    // then keep it going far longer than the signal takes).
    let port = command_line(server)
        .split_whitespace()
        .skip_while(|&arg| arg != "--port")
        .nth(1)
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("no --port in {}", command_line(server)));
    let flooding = common::wait_connected(port, 8, Duration::from_secs(120));
    if !flooding {
        let _ = cli.kill();
    }
    assert!(flooding, "verify never opened the flood's 8 connections to port {port}");
    assert!(cli.try_wait().unwrap().is_none(), "verify ended before the signal");
    interrupt(&cli);
    let status = wait_exit(&mut cli);
    assert_eq!(status.code(), Some(130));
    assert!(!alive(server), "server {server} ({}) outlived callbench verify", command_line(server));
}
