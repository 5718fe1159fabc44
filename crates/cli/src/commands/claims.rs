//! `callbench claims TOOL`: what a load tool's own output says, read by its adapter in
//! callbench-peers (the one reader of wrk's, h2load's, ghz's, oha's… reports; bench/ calls it), as
//! one JSON object.

use anyhow::{anyhow, Context, Result};
use std::io::Read;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The tool whose output it is: wrk, ab, h2load, hey, fortio, ghz, vegeta, oha, locust, locust-fast,
    /// locust-grpc, or a seed article's client.
    tool: String,
    /// Its stdout [default: read from stdin].
    #[arg(long, value_name = "FILE")]
    stdout: Option<PathBuf>,
    /// Its stderr.
    #[arg(long, value_name = "FILE")]
    stderr: Option<PathBuf>,
    /// A report file it wrote, under the name it wrote it (h2load-requests.log, ab-percentiles.csv,
    /// fortio.json, locust.json).
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
}

/// Prints `{"ok", "errors", "seconds", "throughput", "latency_us", "error_kinds"}`; an output it
/// cannot read is an error (one line, exit 1).
pub fn run(args: Args) -> Result<i32> {
    let tool = callbench_peers::by_name(&args.tool).map_err(|e| anyhow!(e))?;
    let read = |path: &PathBuf| std::fs::read(path).with_context(|| format!("cannot read {}", path.display()));
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let stdout = match &args.stdout {
        Some(path) => read(path)?,
        None => {
            let mut bytes = vec![];
            std::io::stdin().read_to_end(&mut bytes).context("cannot read stdin")?;
            bytes
        }
    };
    let mut output = callbench_peers::Output {
        stdout: text(stdout),
        stderr: args.stderr.as_ref().map(read).transpose()?.map(text).unwrap_or_default(),
        ..Default::default()
    };
    for path in &args.files {
        let name = path.file_name().ok_or_else(|| anyhow!("{} names no file", path.display()))?;
        output.files.insert(name.to_string_lossy().into_owned(), text(read(path)?));
    }
    let claims = tool.parse(&output).map_err(|e| anyhow!("{}'s output cannot be read: {e}", tool.name()))?;
    let json = serde_json::json!({
        "ok": claims.ok,
        "errors": claims.errors,
        "seconds": claims.seconds,
        "throughput": claims.throughput,
        "latency_us": claims.latency,
        "error_kinds": claims.error_kinds,
    });
    println!("{json}");
    Ok(0)
}
