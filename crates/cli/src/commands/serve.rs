//! `callbench serve NAME`: a reference server in the foreground. With `--network SPEC` it runs
//! behind an emulated link, in the spirit of Mahimahi's shells: the server in a namespace of its
//! own at 198.18.0.2, and `-- COMMAND` (curl, wrk, `callbench load`, a script) run on the link's
//! client side with CALLBENCH_TARGET set to the server's URL. With `--dns NAME` the command's name
//! lookups cross the link too: a name server on the server side answers NAME, and the command's
//! resolver asks it. With `--tls` the command finds the server's certificate in CALLBENCH_CA_CERT.
//! With `--front COMMAND` a front end (nginx, say) runs on the server side between the link and the
//! server, and the command is pointed at it; with `--tls` the front end serves TLS and the server
//! plaintext, as a platform's TLS-terminating proxy does.

use anyhow::{anyhow, bail, Context, Result};
use callbench_launcher::cpu_limit::CpuLimit;
use callbench_launcher::manifest::{self, Manifest};
use callbench_launcher::process::{self, ServerProcess, StartOptions};
use callbench_link::dns::{check_name, NameServer, Resolver, DEFAULT_NAME};
use callbench_link::front::FrontEnd;
use callbench_link::{pcap, probe::ping_pong, Link, LinkSpec, SERVER_ADDR};
use callbench_primitives::scratch::ScratchDir;
use callbench_verify::probe;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// The server's name (see `callbench servers`).
    name: String,
    /// Port to listen on (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Address to bind (with --network: the link's far end, 198.18.0.2).
    #[arg(long, default_value = "127.0.0.1", conflicts_with = "network")]
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
    /// Serve across an emulated network link, e.g. `rtt=40ms,bandwidth=20mbit,loss=0.01` (keys: rtt,
    /// delay[_up|_down], jitter, bandwidth[_up|_down], queue, loss[_up|_down], seed, mtu). Needs root.
    #[arg(long, value_name = "SPEC")]
    network: Option<String>,
    /// Serve TLS (a fresh self-signed certificate; clients need --insecure, curl -k).
    #[arg(long)]
    tls: bool,
    /// Hold the server to a share of one CPU's time, e.g. `20%` (an AWS t2.small's baseline) or `1.5`: a
    /// cgroup of its own with that CFS quota per 100 ms; how often it was held back is printed at the
    /// end. Needs root.
    #[arg(long, value_name = "SHARE", value_parser = callbench_launcher::cpu_limit::parse)]
    cpu_limit: Option<f64>,
    /// With --cpu-limit: quota left unused in earlier periods that a later period may spend, e.g.
    /// `20ms` (cgroup's `cpu.max.burst`; at most the quota of one period, which the kernel allows).
    #[arg(long, value_name = "TIME", requires = "cpu_limit")]
    cpu_burst: Option<String>,
    /// With --network and a command: write every packet of the command's run, as its side of the link
    /// sees them, into this pcap file (read it with `callbench phases FILE`, Wireshark or tcpdump -r).
    #[arg(long, value_name = "FILE", requires = "command")]
    pcap: Option<std::path::PathBuf>,
    /// With --pcap: the capture's file is at most this large (256MiB, 64kB, 1GB); past it, packets are
    /// counted, not written, and serve says how many.
    #[arg(long, value_name = "SIZE", requires = "pcap", default_value = pcap::DEFAULT_CAP_TEXT, value_parser = pcap::parse_cap)]
    pcap_max_bytes: u64,
    /// With --network and a command: serve NAME from a name server (dnsmasq) on the link's server side,
    /// point the command's resolver at it, and give CALLBENCH_TARGET with NAME for the address.
    #[arg(long, value_name = "NAME", requires = "command", num_args = 0..=1, default_missing_value = DEFAULT_NAME)]
    dns: Option<String>,
    /// With --network and a command: a front end run (`sh -c`) on the link's server side, between the
    /// link and the server, e.g. nginx proxying to it. It listens on $CALLBENCH_FRONT_ADDR and reaches
    /// the server at $CALLBENCH_UPSTREAM; the command's CALLBENCH_TARGET names the front end. With
    /// --tls the front end serves TLS (its certificate is the one in CALLBENCH_CA_CERT), the server
    /// plaintext.
    #[arg(long, value_name = "COMMAND", requires = "command")]
    front: Option<String>,
    /// With --network: a command to run on the link's client side (CALLBENCH_TARGET holds the
    /// server's URL); serve stops when it ends and exits with its code.
    #[arg(last = true, value_name = "COMMAND", requires = "network")]
    command: Vec<String>,
}

pub async fn run(args: Args) -> Result<i32> {
    let repo = super::repo()?;
    let manifest = manifest::find(&repo, &args.name)?;
    if let Some(name) = &args.dns {
        check_name(name).map_err(|e| anyhow!(e))?;
    }
    let link = match &args.network {
        None => None,
        Some(text) => {
            let spec = LinkSpec::parse(text).map_err(|e| anyhow!(e))?;
            Some(Link::create(&spec, &[]).map_err(|e| anyhow!(e))?)
        }
    };
    if !args.no_build {
        process::build(&repo, &manifest)?;
    }
    // Made before the server and dropped after it: the group is removed once the server has left it.
    let cpu_limit = match args.cpu_limit {
        Some(cpus) => {
            let burst_us = match &args.cpu_burst {
                Some(text) => callbench_launcher::cpu_limit::parse_burst(text, cpus).map_err(|e| anyhow!(e))?,
                None => 0,
            };
            Some(CpuLimit::create(cpus, burst_us).map_err(|e| anyhow!(e))?)
        }
        None => None,
    };
    let options = StartOptions {
        host: if link.is_some() { SERVER_ADDR.to_string() } else { args.host.clone() },
        port: args.port,
        workers: args.workers as usize,
        mode: args.mode.clone(),
        cpus: None,
        // With a command across the link, stdout is the command's alone.
        echo_output: args.command.is_empty(),
        netns: link.as_ref().map(|l| l.server.fd()),
        // Behind a front end, the front end terminates TLS.
        tls: args.tls && args.front.is_none(),
        env: Vec::new(),
        cgroup: cpu_limit.as_ref().map(|l| l.procs.clone()),
    };
    let mut server = ServerProcess::start(&repo, &manifest, &options)?;
    if let Some(limit) = &cpu_limit {
        let burst = match limit.burst_us {
            0 => String::new(),
            us => format!(", bursting by up to {:.1} ms a period", us as f64 / 1000.0),
        };
        eprintln!(
            "callbench: {} is held to {} of a CPU{burst} ({})",
            manifest.name,
            share(limit.cpus),
            limit.dir().display()
        );
    }
    let limit_dir = cpu_limit.as_ref().map(|l| l.dir().to_path_buf());
    let code = serve(args, &manifest, &mut server, link.as_ref(), limit_dir).await;
    server.stop(Duration::from_secs(5));
    if let Some(t) = cpu_limit.as_ref().and_then(|l| l.throttling()) {
        eprintln!(
            "callbench: its CPU limit held {} back in {} of {} periods of 100 ms, {:.1} ms in all",
            manifest.name,
            t.throttled_periods,
            t.periods,
            t.throttled_us as f64 / 1000.0
        );
    }
    code
}

/// `20%`, `150%`.
fn share(cpus: f64) -> String {
    format!("{}%", (cpus * 1000.0).round() / 10.0)
}

async fn serve(
    args: Args,
    manifest: &Manifest,
    server: &mut ServerProcess,
    link: Option<&Link>,
    limit_dir: Option<std::path::PathBuf>,
) -> Result<i32> {
    let url = format!("{}://{}", scheme(manifest, args.tls && args.front.is_none()), server.addr);
    if args.tls && args.front.is_none() {
        callbench_verify::dial::speaks_tls(server.addr);
    }
    let Some(link) = link else {
        probe::wait_ready(server, manifest.protocol, Duration::from_secs(60)).await?;
        eprintln!("callbench: {} ready at {url} (Ctrl-C stops it)", manifest.name);
        return watch(server, manifest).await;
    };
    // Ready as seen from the link's client side: the first calls cross the link too.
    let protocol = manifest.protocol;
    link.client
        .run(|| {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            runtime.block_on(probe::wait_ready(server, protocol, Duration::from_secs(60))).map_err(|e| format!("{e:#}"))
        })
        .map_err(|e| anyhow!(e))?;
    let spec = link.spec();
    link.set_spec(&LinkSpec::transparent());
    let own = ping_pong(link, 50).map_err(|e| anyhow!(e))?;
    link.set_spec(&spec);
    eprintln!(
        "callbench: {} ready at {url} across an emulated link ({spec}); the link alone costs {:.0} µs a round trip \
         (measured)",
        manifest.name,
        own.median_us()
    );
    if args.command.is_empty() {
        eprintln!(
            "callbench: run commands across it with `ip netns exec {} COMMAND` (Ctrl-C stops the server and removes the \
             link)",
            link.client.name
        );
        return watch(server, manifest).await;
    }
    // Files the command is given (the server's certificate, the resolver file), removed at the end:
    // in a directory of its own, new and private (serve runs as root; /tmp is everyone's).
    let scratch = ScratchDir::new("callbench-serve").context("cannot make serve's scratch directory")?;
    // The server's process group (its pid) and its CPU limit's cgroup: for a command that reads the
    // server's CPU time (/proc/PID/stat) or throttling (cpu.stat) around the calls it times.
    let mut env = vec![
        ("CALLBENCH_SERVER_ADDR".to_string(), server.addr.to_string()),
        ("CALLBENCH_SERVER_PID".to_string(), server.pid().to_string()),
    ];
    if let Some(dir) = limit_dir {
        env.push(("CALLBENCH_CPU_LIMIT_DIR".into(), dir.display().to_string()));
    }
    let front = match &args.front {
        Some(command) => Some(FrontEnd::start(link, command, server.addr).map_err(|e| anyhow!(e))?),
        None => None,
    };
    // Where the command's calls go: the front end when there is one.
    let target: std::net::SocketAddr = front.as_ref().map_or(server.addr, |f| f.addr.into());
    if let Some(f) = &front {
        eprintln!("callbench: a front end at {} passes calls to {}", f.addr, server.addr);
        env.push(("CALLBENCH_FRONT_ADDR".into(), f.addr.to_string()));
    }
    if args.tls {
        let pem = link
            .client
            .run(|| {
                callbench_verify::dial::server_certificate_pem(target, Duration::from_secs(10)).map_err(String::from)
            })
            .map_err(|e| anyhow!("cannot read the server's certificate: {e}"))?;
        let path = scratch.join("server.pem");
        std::fs::write(&path, pem).with_context(|| format!("cannot write {}", path.display()))?;
        env.push(("CALLBENCH_CA_CERT".into(), path.display().to_string()));
    }
    let names = match &args.dns {
        Some(name) => Some(NameServer::start(link, name, scratch.path()).map_err(|e| anyhow!(e))?),
        None => None,
    };
    let url = match &names {
        Some(n) => format!("{}://{}:{}", scheme(manifest, args.tls), n.name, target.port()),
        None => format!("{}://{target}", scheme(manifest, args.tls)),
    };
    if let Some(n) = &names {
        eprintln!("callbench: {} resolves to {SERVER_ADDR} from a name server across the link", n.name);
    }
    env.push(("CALLBENCH_TARGET".into(), url));
    if let Some(path) = &args.pcap {
        link.start_capture(path, pcap::DEFAULT_SNAPLEN, args.pcap_max_bytes).map_err(|e| anyhow!(e))?;
    }
    let code = run_across(link, &args.command, &env, names.as_ref().map(|n| &n.resolver))?;
    drop(names);
    drop(front);
    if let Some(path) = &args.pcap {
        let written =
            link.end_capture(pcap::FINISH_WITHIN).map_err(|e| anyhow!("the capture {} is cut: {e}", path.display()))?;
        match written.cut() {
            Some(cut) => eprintln!(
                "callbench: {cut} (--pcap-max-bytes); the {} packets before are in {} (`callbench phases {1}` reads \
                 them)",
                written.packets,
                path.display()
            ),
            None => eprintln!(
                "callbench: the command's packets are in {} (`callbench phases {0}` reads them)",
                path.display()
            ),
        }
    }
    let stats = link.stats();
    eprintln!(
        "callbench: the link carried {} packets up ({} lost, {} dropped by the queue) and {} down ({} lost, {} \
         dropped); its forwarder used {:.1}% of a CPU",
        stats.up.packets,
        stats.up.lost,
        stats.up.queue_drops,
        stats.down.packets,
        stats.down.lost,
        stats.down.queue_drops,
        stats.forwarder_busy() * 100.0
    );
    Ok(code)
}

fn scheme(manifest: &Manifest, tls: bool) -> &'static str {
    match (manifest.protocol, tls) {
        (manifest::Protocol::Rest, false) => "http",
        (manifest::Protocol::Rest, true) => "https",
        (manifest::Protocol::Grpc, false) => "grpc",
        (manifest::Protocol::Grpc, true) => "grpcs",
        // An echo has no TLS (its manifest has no [tls], so --tls stops before this).
        (manifest::Protocol::Raw, _) => "raw",
    }
}

/// Until the server ends (Ctrl-C and SIGTERM are handled by `stop_servers_on_signals`).
async fn watch(server: &mut ServerProcess, manifest: &Manifest) -> Result<i32> {
    loop {
        if let Some(status) = server.exited() {
            bail!("{} exited ({status})", manifest.name);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `argv` on the link's client side (its resolver pointed at `resolver`, if given) and returns
/// its exit code (128 + signal if killed).
fn run_across(link: &Link, argv: &[String], env: &[(String, String)], resolver: Option<&Resolver>) -> Result<i32> {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).envs(env.iter().map(|(k, v)| (k, v)));
    let netns = link.client.fd();
    let resolver = resolver.cloned();
    // SAFETY: only async-signal-safe calls between fork and exec. The command stays in
    // callbench's process group, so a terminal's Ctrl-C reaches it as it would without the link.
    unsafe {
        command.pre_exec(move || {
            process::enter_namespace(netns)?;
            if let Some(r) = &resolver {
                r.enter()?;
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let status = command.status().with_context(|| format!("cannot run {} across the link", argv[0]))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
