use anyhow::{bail, Result};
use callbench_launcher::manifest::{self, Manifest};
use callbench_launcher::process;
use callbench_verify::{Report, VerifyOptions};
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// A server name (see `callbench servers`), or the address of a running server: http://HOST:PORT or grpc://HOST:PORT.
    #[arg(required_unless_present = "all")]
    target: Option<String>,
    /// Verify every supported server in servers/.
    #[arg(long, conflicts_with = "target")]
    all: bool,
    /// Bad requests per flood round (two rounds); 0 skips the flood.
    #[arg(long, default_value_t = 2000)]
    flood: usize,
    /// Keep-alive connections the flood uses.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    connections: u16,
    /// Mode(s) to start a named server in: preloaded, per-request or all.
    #[arg(long, default_value = "all", value_parser = ["preloaded", "per-request", "all"])]
    mode: String,
    /// Worker threads for a named server.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    workers: u16,
    /// Seconds to wait for a named server to become ready.
    #[arg(long, default_value_t = 60)]
    ready_timeout: u64,
    /// Do not run the server's build command first.
    #[arg(long)]
    no_build: bool,
    /// Allow an address outside 127.0.0.0/8 and ::1 (and an emulated link's far end).
    #[arg(long)]
    allow_remote: bool,
    /// Start the server with TLS and verify it over TLS (an address: write https:// or grpcs://).
    #[arg(long)]
    tls: bool,
    /// Print failures only.
    #[arg(short, long)]
    quiet: bool,
}

pub async fn run(args: Args) -> Result<i32> {
    let options = VerifyOptions {
        flood_requests: args.flood,
        flood_connections: args.connections as usize,
        modes: match args.mode.as_str() {
            "all" => vec!["preloaded".into(), "per-request".into()],
            one => vec![one.to_string()],
        },
        workers: args.workers as usize,
        ready_timeout: Duration::from_secs(args.ready_timeout),
        tls: args.tls,
    };
    let mut total = Report::default();
    if let Some(target) = args.target.as_deref().filter(|t| t.contains("://")) {
        let (protocol, addr) = callbench_verify::parse_address(target)?;
        if let Err(why) = callbench_link::route::allowed(addr.ip(), args.allow_remote) {
            bail!("refusing to verify {addr}: {why}");
        }
        let report = callbench_verify::verify_address(protocol, addr, &options).await?;
        print_report(target, &report, args.quiet);
        total.steps.extend(report.steps);
    } else {
        let repo = super::repo()?;
        let servers: Vec<Manifest> = match &args.target {
            Some(name) => vec![manifest::find(&repo, name)?],
            None => manifest::discover(&repo)?.into_iter().filter(|m| m.supported).collect(),
        };
        for server in &servers {
            if !args.no_build {
                process::build(&repo, server)?;
            }
        }
        for server in &servers {
            if args.tls && server.tls.is_none() {
                println!("{}: not verified: {}", server.name, server.tls_args().unwrap_err());
                if args.target.is_some() {
                    bail!("{}", server.tls_args().unwrap_err());
                }
                continue;
            }
            let report = callbench_verify::verify_server(&repo, server, &options).await?;
            print_report(&server.name, &report, args.quiet);
            total.steps.extend(report.steps);
        }
    }
    println!("verify: {}", total.summary());
    Ok(if total.failed() == 0 { 0 } else { 1 })
}

fn print_report(target: &str, report: &Report, quiet: bool) {
    println!("{target}: {}", report.summary());
    for step in &report.steps {
        if !quiet {
            println!("  {}", step.title);
        }
        for o in &step.outcomes {
            match &o.failure {
                None if o.class == "deviation" => println!("    DEVN  {}", o.name),
                None if !quiet => println!("    ok    {}", o.name),
                None => {}
                Some(why) => println!("    FAIL  {} [{}]: {why}", o.name, o.class),
            }
        }
    }
}
