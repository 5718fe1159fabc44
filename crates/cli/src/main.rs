//! The `callbench` command: parse, dispatch, print. The work is in the library crates.

mod commands;
#[cfg(test)]
mod reference;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "callbench", version, about = "Fair REST vs gRPC vs in-process call benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a suite of experiments (default: REST vs gRPC vs in-process on the built-in Rust servers), or the
    /// default suite's questions on your own endpoints, and report.
    Run(Box<commands::run::Args>),
    /// Re-render report.md and report.html of a results folder.
    Report(commands::report::Args),
    /// Compare two results folders: what changed, and whether it is significant.
    Compare(commands::compare::Args),
    /// Check a server against every vector of the contract, then flood it with bad input.
    Verify(commands::verify::Args),
    /// Start a reference server in the foreground (Ctrl-C stops it).
    Serve(commands::serve::Args),
    /// List the reference servers found in servers/.
    Servers(commands::servers::Args),
    /// Several machines on this one: a network namespace per host on one bridge, until Ctrl-C.
    Lab(commands::lab::Args),
    /// Read a packet capture (serve --network … --pcap) as each connection's DNS, TCP, TLS and exchanges.
    Phases(commands::phases::Args),
    /// Write the deterministic users.json of the auth workload.
    GenUsers(commands::gen_users::Args),
    /// Read a load tool's own output (wrk, h2load, ghz, oha…) as its figures: one JSON object.
    Claims(commands::claims::Args),
    /// Load any HTTP/1.1, HTTP/2 or gRPC endpoint (or an in-process workload) and measure it.
    Load(Box<commands::load::Args>),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            // One line, as every other error: clap's first line names the problem.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            eprintln!("callbench: error: {first} (see --help)");
            std::process::exit(2)
        }
    };
    // `load` runs on as many threads as asked (one, by default: the leanest client); the rest on two.
    let threads = match &cli.command {
        Command::Load(args) => args.spec.threads,
        // One thread: the client stays on its CPU, and servers are spawned from a thread that
        // lives as long as callbench (their PR_SET_PDEATHSIG follows the spawning thread).
        Command::Run(_) => 1,
        _ => 2,
    };
    let runtime = match threads {
        1 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        n => tokio::runtime::Builder::new_multi_thread().worker_threads(n.max(1)).enable_all().build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => exit_with(format!("cannot start the async runtime: {e}")),
    };
    // Driven by the engine's crate, so that the scheduler running the calls' tasks is compiled
    // there (crates/engine/src/main_loop.rs), not with this crate's optimisation.
    let result = callbench_engine::main_loop::block_on(
        &runtime,
        Box::pin(async {
            if !matches!(cli.command, Command::Load(_) | Command::Run(_)) {
                commands::stop_servers_on_signals();
            }
            let result = match cli.command {
                Command::Load(args) => commands::load::run(*args).await,
                Command::Run(args) => commands::run::run(*args).await,
                Command::Report(args) => commands::report::run(args),
                Command::Compare(args) => commands::compare::run(args),
                Command::Verify(args) => commands::verify::run(args).await,
                Command::Serve(args) => commands::serve::run(args).await,
                Command::Lab(args) => commands::lab::run(args).await,
                Command::Servers(args) => commands::servers::run(args),
                Command::GenUsers(args) => commands::gen_users::run(args),
                Command::Phases(args) => commands::phases::run(args),
                Command::Claims(args) => commands::claims::run(args),
            };
            result.map_err(|e| format!("{e:#}"))
        }),
    );
    callbench_launcher::process::kill_all();
    callbench_link::cleanup::remove_all();
    // A signal's handler exits with the signal's code; if the main flow got here first
    // (e.g. it saw the server it was watching end), that code still wins.
    if let Some(code) = callbench_launcher::process::interrupted() {
        std::process::exit(code);
    }
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => exit_with(e),
    }
}

fn exit_with(message: String) -> ! {
    // One line: the first line of the error chain carries the cause.
    eprintln!("callbench: error: {}", message.replace('\n', " "));
    callbench_launcher::process::kill_all();
    callbench_link::cleanup::remove_all();
    std::process::exit(1)
}
