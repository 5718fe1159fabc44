use anyhow::{bail, Result};
use callbench_servers::manifest;
use callbench_servers::process::{self, ServerProcess, StartOptions};
use callbench_verify::probe;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// The server's name (see `callbench servers`).
    name: String,
    /// Port to listen on (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Threads (or processes) that serve calls.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: u16,
    /// How auth finds users: preloaded or per-request.
    #[arg(long, default_value = "preloaded", value_parser = ["preloaded", "per-request"])]
    mode: String,
    /// Do not run the server's build command first.
    #[arg(long)]
    no_build: bool,
}

pub async fn run(args: Args) -> Result<i32> {
    let repo = super::repo()?;
    let manifest = manifest::find(&repo, &args.name)?;
    if !args.no_build {
        process::build(&repo, &manifest)?;
    }
    let options = StartOptions {
        host: args.host,
        port: args.port,
        workers: args.workers as usize,
        mode: args.mode,
        cpus: None,
        echo_output: true,
    };
    let mut server = ServerProcess::start(&repo, &manifest, &options)?;
    probe::wait_ready(&mut server, manifest.protocol, Duration::from_secs(60)).await?;
    let scheme = match manifest.protocol {
        manifest::Protocol::Rest => "http",
        manifest::Protocol::Grpc => "grpc",
    };
    eprintln!("callbench: {} ready at {scheme}://{} (Ctrl-C stops it)", manifest.name, server.addr);
    // Ctrl-C and SIGTERM are handled by stop_servers_on_signals; here we only watch for the server ending.
    loop {
        if let Some(status) = server.exited() {
            bail!("{} exited ({status})", manifest.name);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
