//! The `callbench` command: parse, dispatch, print. The work is in the library crates.

mod commands;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "callbench", version, about = "Fair REST vs gRPC vs in-process call benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a server against every vector of the contract, then flood it with bad input.
    Verify(commands::verify::Args),
    /// Start a reference server in the foreground (Ctrl-C stops it).
    Serve(commands::serve::Args),
    /// List the reference servers found in servers/.
    Servers(commands::servers::Args),
    /// Write the deterministic users.json of the auth workload.
    GenUsers(commands::gen_users::Args),
}

fn main() {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => exit_with(format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(async {
        commands::stop_servers_on_signals();
        match cli.command {
            Command::Verify(args) => commands::verify::run(args).await,
            Command::Serve(args) => commands::serve::run(args).await,
            Command::Servers(args) => commands::servers::run(args),
            Command::GenUsers(args) => commands::gen_users::run(args),
        }
    });
    callbench_harness::process::kill_all();
    // A signal's handler exits with the signal's code; if the main flow got here first
    // (e.g. it saw the server it was watching end), that code still wins.
    if let Some(code) = callbench_harness::process::interrupted() {
        std::process::exit(code);
    }
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => exit_with(format!("{e:#}")),
    }
}

fn exit_with(message: String) -> ! {
    // One line: the first line of the error chain carries the cause.
    eprintln!("callbench: error: {}", message.replace('\n', " "));
    callbench_harness::process::kill_all();
    std::process::exit(1)
}
