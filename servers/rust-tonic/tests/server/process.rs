//! The process: flags, worker threads, clean stop on SIGINT/SIGTERM.

use crate::common;

use callbench_contract::pb::students_client::StudentsClient;
use callbench_contract::pb::ListStudentsRequest;
use common::Server;
use std::process::Command;
use std::time::Duration;

#[test]
fn version_flag() {
    let output = Command::new(env!("CARGO_BIN_EXE_rust-tonic")).arg("--version").output().expect("runs");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), format!("rust-tonic {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_missing_users_file_is_a_clean_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_rust-tonic"))
        .args(["--port", "0", "--users", "/nonexistent/users.json"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("users"));
}

/// tokio names its worker threads `tokio-rt-worker` (`tokio-runtime-worker`,
/// cut to 15 characters by /proc, before tokio 1.47).
fn worker_threads(pid: u32) -> usize {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| matches!(name.trim(), "tokio-rt-worker" | "tokio-runtime-w"))
        .count()
}

/// A thread takes its name when it first runs: on a busy machine a worker made a moment ago may
/// still carry its parent's. Waits (up to 20 s) until `workers` are named, then checks no more are.
#[tokio::test]
async fn workers_sets_the_worker_threads() {
    for workers in [1, 3] {
        let server = Server::start_with(&["--workers", &workers.to_string()]);
        let mut client = StudentsClient::new(server.channel().await);
        client.list(ListStudentsRequest {}).await.expect("OK");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while worker_threads(server.pid()) < workers && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(worker_threads(server.pid()), workers);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stops_cleanly_on_sigterm_and_sigint() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut server = Server::start();
        // An open connection must not hold the server up.
        let mut client = StudentsClient::new(server.channel().await);
        client.list(ListStudentsRequest {}).await.expect("OK");
        server.signal(signal);
        let status = tokio::task::block_in_place(|| server.wait_exit(Duration::from_secs(2)));
        assert_eq!(status.map(|s| s.code()), Some(Some(0)), "signal {signal}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stuck_call_does_not_hold_up_the_stop() {
    let mut server = Server::start();
    // A call whose body never ends: the guard waits for its first message.
    let tcp = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
    let (client, mut connection) = h2::client::handshake(tcp).await.expect("handshake");
    let mut ping = connection.ping_pong().expect("the connection's ping");
    tokio::spawn(connection);
    let mut client = client.ready().await.expect("ready");
    let request = http::Request::post(format!("http://{}/callbench.v1.Echo/Echo", server.addr))
        .header("content-type", "application/grpc")
        .body(())
        .expect("a request");
    let (_response, mut send) = client.send_request(request, false).expect("sent");
    send.send_data(vec![0u8, 0].into(), false).expect("two bytes sent");
    // The server read the call's headers and bytes once it answers a PING sent after them (frames
    // are read in order), rather than after a guessed pause.
    tokio::time::timeout(Duration::from_secs(10), ping.ping(h2::Ping::opaque()))
        .await
        .expect("the server answers a PING within 10 s")
        .expect("a PING answer");

    server.signal(libc::SIGTERM);
    let status = tokio::task::block_in_place(|| server.wait_exit(Duration::from_secs(3)));
    assert_eq!(status.map(|s| s.code()), Some(Some(0)));
}
