//! Records every installed tool's real output into `fixtures/`, for the adapters' parser tests:
//! one short run each (students, 8 in flight, 2 s) against a REST and a gRPC reference server.
//!
//!     callbench serve rust-actix --port 18080 & callbench serve rust-tonic --port 18081 &
//!     cargo run --release -p callbench-peers --example record -- 127.0.0.1:18080 127.0.0.1:18081

use callbench_peers::execute::{self, locate};
use callbench_peers::{Load, Protocol};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[path = "../tests/common/call.rs"]
mod call;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [rest, grpc] = &args[..] else {
        eprintln!("usage: record REST_ADDR GRPC_ADDR");
        std::process::exit(2);
    };
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let venv = root.join("../../target/peers/locust/venv/bin");
    let call = call::students();
    for tool in callbench_peers::all() {
        if callbench_peers::unavailable(tool).is_some() {
            continue;
        }
        let Some(program) = locate(tool.program(), std::slice::from_ref(&venv)) else {
            eprintln!("{}: not installed", tool.name());
            continue;
        };
        let grpc_tool = matches!(tool.name(), "ghz" | "locust-grpc" | "h2load");
        let dir = std::env::temp_dir().join(format!("callbench-record-{}", tool.name()));
        let load = Load {
            protocol: if grpc_tool { Protocol::Grpc } else { Protocol::Http1 },
            tls: false,
            authority: if grpc_tool { grpc.clone() } else { rest.clone() },
            call: call.clone(),
            concurrency: 8,
            connections: None,
            duration: Duration::from_secs(2),
            calls: None,
            warmup: Duration::ZERO,
            // h2load logs every call: a rate keeps its log (a fixture) small.
            rate: (tool.name() == "h2load").then_some(1000.0),
            gzip: false,
            new_connection_per_call: false,
            threads: 1,
            dir: dir.clone(),
            repo: root.join("../.."),
            ca_cert: None,
        };
        let invocation = tool.invocation(&load).unwrap();
        let finished =
            execute::run(&invocation, &program, &dir, &[], None, Duration::from_secs(60), &AtomicBool::new(false))
                .unwrap();
        let fixtures = root.join("fixtures");
        if !matches!(tool.program(), "fortio" | "locust") {
            let ext = if finished.output.stdout.trim_start().starts_with('{') { "json" } else { "txt" };
            std::fs::write(fixtures.join(format!("{}.{ext}", tool.name())), &finished.output.stdout).unwrap();
        }
        for (name, text) in &finished.output.files {
            let fixture: PathBuf = fixtures.join(format!("{}{}", tool.name(), &name[tool.program().len()..]));
            std::fs::write(fixture, text).unwrap();
        }
        match tool.parse(&finished.output) {
            Ok(c) => {
                println!("{}: {} ok, {} errors, {:.0}/s, {:?}", tool.name(), c.ok, c.errors, c.throughput, c.latency)
            }
            Err(e) => {
                let stderr: String = finished.output.stderr.chars().take(400).collect();
                println!("{}: cannot parse: {e}\n{stderr}", tool.name())
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
