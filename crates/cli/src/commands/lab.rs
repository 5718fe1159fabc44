//! `callbench lab HOST...`: several machines on this one — a network namespace per host, all on one
//! bridge, addresses 198.18.1.1, .2, … in the order named — kept until Ctrl-C or SIGTERM. Run a
//! process on a host with `ip netns exec NAMESPACE COMMAND`; targets in the lab pass callbench's
//! loopback rule from inside it (e.g. a Ray head and nodes, a server, `callbench load`).

use anyhow::{anyhow, Result};
use callbench_link::lab::Lab;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// The hosts' names (a-z, 0-9, _), e.g. `head node1 node2 server`.
    #[arg(required = true, value_name = "HOST")]
    hosts: Vec<String>,
}

pub async fn run(args: Args) -> Result<i32> {
    let lab = Lab::create(&args.hosts).map_err(|e| anyhow!(e))?;
    // stdout: one line per host, `HOST NAMESPACE ADDRESS`, for scripts to read.
    let mut out = std::io::stdout().lock();
    for host in &lab.hosts {
        writeln!(out, "{} {} {}", host.name, host.namespace.name, host.address)?;
    }
    out.flush()?;
    drop(out);
    eprintln!(
        "callbench: lab ready ({} hosts on one bridge): run a command on a host with `ip netns exec NAMESPACE \
         COMMAND`; Ctrl-C removes the lab",
        lab.hosts.len()
    );
    // Ctrl-C and SIGTERM remove the namespaces (`stop_servers_on_signals`) and exit.
    std::future::pending::<()>().await;
    unreachable!()
}
