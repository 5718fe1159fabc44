//! The load tools' reports as callbench reads them after a run (wrk, ab, h2load, hey, fortio,
//! ghz, vegeta, oha, locust, and the seed clients' JSON lines): an error or claims, never a panic.
//! Byte 0 picks the tool (modulo their number, in `callbench_peers::all()`'s order, then
//! `seed_clients()`'s); the rest, as text, is its stdout before
//! the first NUL byte and every report file it writes after it (without one, the whole text is both).
#![no_main]
use callbench_peers::{Output, Protocol, Tool};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// Every tool with the names of the report files it writes (from its command for a REST cell, or
/// a gRPC one where it runs only those).
fn tools() -> &'static [(&'static dyn Tool, Vec<String>)] {
    static TOOLS: OnceLock<Vec<(&'static dyn Tool, Vec<String>)>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let load = |protocol| callbench_peers::Load {
            protocol,
            tls: false,
            authority: "127.0.0.1:8080".into(),
            call: callbench_peers::Call {
                method: "GET".into(),
                path: "/".into(),
                body: None,
                grpc_method: "callbench.v1.Auth/Test".into(),
                grpc_message: vec![],
                descriptor_set: vec![],
            },
            concurrency: 1,
            connections: None,
            duration: std::time::Duration::from_secs(1),
            calls: None,
            warmup: std::time::Duration::ZERO,
            rate: None,
            gzip: false,
            new_connection_per_call: false,
            threads: 1,
            dir: "/tmp/run".into(),
            repo: "/src/callbench".into(),
            ca_cert: None,
        };
        let outputs = |tool: &dyn Tool| {
            let made = tool.invocation(&load(Protocol::Http1)).or_else(|_| tool.invocation(&load(Protocol::Grpc)));
            made.map(|i| i.outputs).unwrap_or_default()
        };
        // The seed articles' clients after the load tools, so a corpus input keeps its tool.
        callbench_peers::all().into_iter().chain(callbench_peers::seed_clients()).map(|t| (t, outputs(t))).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let [select, rest @ ..] = data else { return };
    let (tool, reports) = &tools()[*select as usize % tools().len()];
    let text = String::from_utf8_lossy(rest);
    let (stdout, report) = text.split_once('\0').unwrap_or((&text, &text));
    let output = Output {
        stdout: stdout.to_string(),
        stderr: String::new(),
        files: reports.iter().map(|name| (name.clone(), report.to_string())).collect(),
    };
    let _ = tool.parse(&output);
});
