//! Every installed tool, run for real against a port where nothing listens: each ends by itself
//! within its duration and grace, and its adapter either cannot read a report (a clear error)
//! or reads one that claims no successful call — never a made-up success, never a panic.

use callbench_peers::execute::{self, locate};
use callbench_peers::{Load, Protocol};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[path = "common/call.rs"]
mod call;

const DURATION: Duration = Duration::from_secs(1);
/// As the runner gives a tool: 15 s to start and finish past its duration, and half its duration.
const LIMIT: Duration = Duration::from_millis(1000 + 15_000 + 500);

#[test]
fn a_tool_that_reaches_no_server_claims_no_success() {
    // A port that was free a moment ago: connections to it are refused.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Where scripts/setup puts locust: cargo's target directory ($CARGO_TARGET_DIR, relative to the
    // checkout, as the runner reads it).
    let root = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo and nextest set CARGO_MANIFEST_DIR"))
        .join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir));
    let venv = target.join("peers/locust/venv/bin");
    let mut checked = vec![];
    for tool in callbench_peers::all() {
        if callbench_peers::unavailable(tool).is_some() {
            continue;
        }
        let program = locate(tool.program(), std::slice::from_ref(&venv)).unwrap_or_else(|| {
            panic!("{} is not installed ({}): scripts/setup installs it", tool.name(), tool.install())
        });
        let grpc = matches!(tool.name(), "ghz" | "locust-grpc");
        let dir = std::env::temp_dir().join(format!("callbench-no-server-{}-{}", std::process::id(), tool.name()));
        let load = Load {
            protocol: if grpc { Protocol::Grpc } else { Protocol::Http1 },
            tls: false,
            authority: format!("127.0.0.1:{port}"),
            call: call::students(),
            concurrency: 2,
            connections: None,
            duration: DURATION,
            calls: None,
            warmup: Duration::ZERO,
            rate: None,
            gzip: false,
            new_connection_per_call: false,
            threads: 1,
            dir: dir.clone(),
            repo: root.clone(),
            ca_cert: None,
        };
        let invocation = callbench_peers::invocation(tool, &load).unwrap();
        let finished = execute::run(&invocation, &program, &dir, &[], None, LIMIT, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
        assert!(!finished.timed_out, "{} was still running past its limit", tool.name());
        match tool.parse(&finished.output) {
            Err(e) => assert!(!e.to_string().is_empty(), "{}: an empty reason", tool.name()),
            Ok(c) => assert_eq!(c.ok, 0, "{} claims {} successful calls to nobody: {c:?}", tool.name(), c.ok),
        }
        checked.push(tool.name());
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(checked.len() >= 10, "{checked:?}");
}
