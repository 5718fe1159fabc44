use super::run_endpoints::{self, CallFlags};
use anyhow::{bail, Context, Result};
use callbench_machine::pinning;
use callbench_runner::execute::{self, Options};
use callbench_runner::suite::{Suite, DEFAULT_SUITE};
use callbench_runner::{environment, store::Store};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// A suite file (suites/*.toml), or your endpoints: [NAME=]URL with http://, https://, grpc://, grpcs://
    /// (the default suite's questions on them: see "Calls to your endpoints"); with neither, the default suite
    /// on the built-in Rust servers.
    #[arg(value_name = "SUITE | URL")]
    inputs: Vec<String>,
    /// The results folder (default: results/<UTC timestamp>/ in the checkout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Repetitions of every cell, instead of the suite's.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1000))]
    repetitions: Option<u16>,
    /// How long every timed repetition is measured (e.g. 50ms), instead of the suite's: a quick look.
    #[arg(long)]
    duration: Option<String>,
    /// The warm-up before every repetition (e.g. 10ms), instead of the suite's.
    #[arg(long)]
    warmup: Option<String>,
    /// CPUs of the client, e.g. 0 or 0-3 (default: the first half of the machine).
    #[arg(long)]
    client_cpus: Option<String>,
    /// CPUs of every server, e.g. 1 or 4-7 (default: the other half). With endpoints: the CPUs their
    /// servers run on, if you pinned them (callbench does not pin a server it did not start).
    #[arg(long)]
    server_cpus: Option<String>,
    /// Do not run the servers' build commands first (they are built already).
    #[arg(long)]
    no_build: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Let the servers of an experiment with a cluster listen on an address other machines reach
    /// (its `server_host`), and endpoints be outside loopback; without it, only loopback.
    #[arg(long)]
    allow_remote: bool,
    /// Let idle CPUs sleep between calls; by default the run holds /dev/cpu_dma_latency at 0 so
    /// that one call at a time does not also time how fast the machine wakes a sleeping CPU.
    #[arg(long)]
    allow_cpu_idle: bool,
    /// A condition every cell must meet, for CI (repeatable, beside an experiment's `thresholds`): p50, p90, p99,
    /// p99.9, mean or max latency with a unit ('p99<200ms'), errors as a share or a count ('errors<0.1%'),
    /// 'calls_per_s>5000'; judged on the cells' medians. A crossed one exits 99
    #[arg(long = "threshold", value_name = "CONDITION", value_parser = callbench_runner::thresholds::parse)]
    thresholds: Vec<callbench_load::threshold::Threshold>,
    /// Push every repetition's figures to a Prometheus remote-write receiver when the run ends,
    /// http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH] (no path: /api/v1/write), labelled by suite, experiment,
    /// cell, server, protocol, workload and repetition; the latency as a native histogram
    #[arg(long = "prometheus", value_name = "URL")]
    prometheus: Option<String>,
    #[command(flatten)]
    prometheus_file: super::prometheus::TextAndLabels,
    #[command(flatten, next_help_heading = "Calls to your endpoints (with URLs)")]
    call: CallFlags,
}

/// Runs the suite; the exit code is the signal's when interrupted, 1 when some cell could not be
/// measured (the results and reports are written either way).
pub async fn run(args: Args) -> Result<i32> {
    let client = args.client_cpus.as_deref().map(pinning::parse_list).transpose().map_err(anyhow::Error::msg)?;
    let server = args.server_cpus.as_deref().map(pinning::parse_list).transpose().map_err(anyhow::Error::msg)?;
    let endpoints = run_endpoints::are_endpoints(&args.inputs) || args.call.twin();
    // Endpoints and a suite of one's own need no checkout; the default suite runs its servers.
    let repo = if !endpoints && args.inputs.is_empty() {
        super::repo().context("the default suite runs the repository's Rust servers; give your endpoints' URLs")?
    } else {
        super::repo_or_standalone()?
    };
    if !endpoints && args.call.any() {
        bail!("-X, -H, -d, --proto, --http2, -k, --cacert, --server-pid… are for endpoints: give their URLs");
    }
    if !endpoints && args.inputs.len() > 1 {
        bail!("one suite file at a time (or endpoints' URLs), not {}", args.inputs.len());
    }
    let (suite, text, file, client_cpus, server_cpus) = if endpoints {
        let (suite, client_cpus, server_cpus) = endpoints_suite(&args, client, server).await?;
        let file = "suites/default.toml (built in), on the endpoints of the command line".to_string();
        (suite, DEFAULT_SUITE.to_string(), file, client_cpus, server_cpus)
    } else {
        let (text, file) = match args.inputs.first() {
            Some(path) => {
                (std::fs::read_to_string(path).with_context(|| format!("cannot read the suite {path}"))?, path.clone())
            }
            None => (DEFAULT_SUITE.to_string(), "suites/default.toml (built in)".to_string()),
        };
        let folder = match args.inputs.first() {
            Some(path) => std::path::absolute(path)?.parent().map(|p| p.to_path_buf()).unwrap_or_default(),
            None => repo.root.join("suites"),
        };
        let mut suite = Suite::parse(&text).map_err(|e| anyhow::anyhow!("suite {file}: {e}"))?.in_folder(&folder);
        // Its servers at a URL: each call made once before anything is measured, as `run URL…` does.
        let cancel = Arc::new(AtomicBool::new(false));
        for mut endpoint in suite.user_endpoints(args.allow_remote).map_err(|e| anyhow::anyhow!("suite {file}: {e}"))? {
            endpoint.probe(cancel.clone()).await.map_err(|e| anyhow::anyhow!("suite {file}: {e}"))?;
            if endpoint.server_pids.is_empty() && !args.quiet {
                eprintln!(
                    "callbench: {} ({}): no pids, so its server's CPU is not measured",
                    endpoint.label, endpoint.spec.target
                );
            }
            suite.endpoints.push(Arc::new(endpoint));
        }
        let (client_cpus, server_cpus) = pinning::choose(
            client.or(suite.client_cpus.clone()),
            server.or(suite.server_cpus.clone()),
            environment::online_cpus(),
        )
        .map_err(anyhow::Error::msg)?;
        (suite, text, file, client_cpus, server_cpus)
    };
    let mut suite = suite;
    suite.override_times(args.duration.as_deref(), args.warmup.as_deref()).map_err(anyhow::Error::msg)?;
    let sink = super::prometheus::Sink::new(args.prometheus.as_deref(), &args.prometheus_file)?;
    // Results in the checkout, or (an installed callbench) where it is run, as hyperfine's exports.
    let results_root = if repo.is_checkout() { repo.root.join("results") } else { PathBuf::from("results") };
    let out = args.out.clone().unwrap_or_else(|| results_root.join(environment::stamp_now()));
    if out.join("results.json").exists() {
        bail!("{} already holds results; give another --out", out.display());
    }
    if !args.allow_remote {
        if let Some(host) = suite.experiments.iter().filter_map(|e| e.cluster.as_ref()?.remote_server_host()).next() {
            bail!("a cluster's server_host {host} is not loopback: other machines would reach the servers; give --allow-remote");
        }
    }
    execute::prepare(&repo, &suite, !args.no_build).map_err(anyhow::Error::msg)?;
    let store = Store::create(&out).map_err(anyhow::Error::msg)?;
    let cancel = Arc::new(AtomicBool::new(false));
    cancel_on_signals(cancel.clone());
    let options = Options {
        suite_text: text,
        suite_file: file,
        command_line: std::env::args().collect(),
        client_cpus,
        server_cpus,
        repetitions: args.repetitions.map(usize::from),
        cancel: cancel.clone(),
        quiet: args.quiet,
        allow_remote: args.allow_remote,
        allow_cpu_idle: args.allow_cpu_idle,
        thresholds: args.thresholds.clone(),
        verified: Default::default(),
    };
    if !args.quiet {
        eprintln!(
            "callbench run: suite '{}', client on CPUs {:?}, servers on CPUs {:?}, results in {}",
            suite.name,
            options.client_cpus,
            options.server_cpus,
            out.display()
        );
    }
    let results = execute::run(&repo, &suite, &store, &options).await;
    let results = match results {
        Ok(results) => results,
        Err(e) => {
            if let Some(sink) = &sink {
                let _ = sink.publish_results(&out, args.quiet).map_err(|e| eprintln!("callbench: error: {e}"));
            }
            bail!("{e} (what was measured is in {})", out.join("results.json").display())
        }
    };
    callbench_report::write::write_reports(&results, &out).context("cannot write the reports")?;
    let answer = callbench_report::summary::answer::lines(&results);
    if let Some((first, rest)) = answer.split_first() {
        println!("\nThe answer\n{first}");
        for line in rest {
            println!("- {line}");
        }
    }
    let seeds = callbench_report::summary::seed_lines(&results);
    if !seeds.is_empty() {
        println!("\nThe seed articles, reproduced under their conditions (reproductions/)");
        for line in seeds {
            println!("{line}");
        }
    }
    let found = callbench_report::summary::sentences(&results);
    if !found.is_empty() {
        println!("\nWhat this run found");
        for sentence in found {
            println!("- {sentence}");
        }
    }
    println!(
        "\nresults: {}\nreport:  {}\n         {}",
        out.join("results.json").display(),
        out.join("report.md").display(),
        out.join("report.html").display()
    );
    // A failed push is said here and makes the exit 1 if nothing worse happened.
    let published = sink.as_ref().map_or(Ok(()), |sink| sink.publish_results(&out, args.quiet));
    if let Err(e) = &published {
        eprintln!("callbench: error: {e}");
    }
    if cancel.load(Ordering::Relaxed) {
        return Ok(callbench_launcher::process::interrupted().unwrap_or(130));
    }
    let failed: Vec<&str> = results
        .cells
        .iter()
        .filter(|c| !matches!(c.status, callbench_results::model::CellStatus::Ok))
        .map(|c| c.id.as_str())
        .collect();
    if !failed.is_empty() {
        eprintln!("callbench: {} cell(s) not fully measured: {}", failed.len(), failed.join(", "));
        return Ok(1);
    }
    let judged: usize = results.cells.iter().map(|c| c.thresholds.len()).sum();
    let crossed = callbench_runner::thresholds::crossed(&results);
    if judged > 0 {
        println!("\nThresholds: {} of {judged} met", judged - crossed.len());
        for line in &crossed {
            println!("- {line}");
        }
    }
    if !crossed.is_empty() {
        eprintln!("callbench: {} threshold(s) crossed: {}", crossed.len(), crossed.join("; "));
        return Ok(callbench_load::threshold::CROSSED_EXIT);
    }
    Ok(if published.is_err() { 1 } else { 0 })
}

/// The suite on the command line's endpoints, each probed with one call (a failure stops the run
/// here, before any results folder is made), and the CPUs: the client's (pinned), and the ones
/// the user says their servers run on (none by default: callbench does not pin what it did not start).
async fn endpoints_suite(
    args: &Args,
    client: Option<Vec<usize>>,
    server: Option<Vec<usize>>,
) -> Result<(Suite, Vec<usize>, Vec<usize>)> {
    let online = environment::online_cpus();
    let server_cpus = server.clone().unwrap_or_default();
    let (client_cpus, _) = match server {
        // Checked as a run's two sides are: on this machine, and apart.
        Some(server) => pinning::choose(client, Some(server), online),
        None => match client {
            Some(client) => pinning::check("client", &client, online).map(|()| (client, vec![])),
            None => pinning::choose(None, None, online),
        },
    }
    .map_err(anyhow::Error::msg)?;
    let mut endpoints =
        run_endpoints::endpoints(&args.inputs, &args.call, args.allow_remote).map_err(anyhow::Error::msg)?;
    let cancel = Arc::new(AtomicBool::new(false));
    for endpoint in &mut endpoints {
        endpoint.probe(cancel.clone()).await.map_err(anyhow::Error::msg)?;
        if endpoint.server_pids.is_empty() && !args.quiet {
            eprintln!(
                "callbench: {} ({}): no --server-pid, so its server's CPU is not measured",
                endpoint.label, endpoint.spec.target
            );
        }
    }
    let suite = Suite::for_endpoints(endpoints.into_iter().map(Arc::new).collect()).map_err(anyhow::Error::msg)?;
    Ok((suite, client_cpus, server_cpus))
}

/// The first SIGINT/SIGTERM ends the repetition in flight and writes what was measured (servers
/// are stopped as the run unwinds); a second one stops every server and exits at once.
fn cancel_on_signals(cancel: Arc<AtomicBool>) {
    use tokio::signal::unix::{signal, SignalKind};
    for (kind, code) in [(SignalKind::interrupt(), 130), (SignalKind::terminate(), 143), (SignalKind::hangup(), 129)] {
        if let Ok(mut stream) = signal(kind) {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                stream.recv().await;
                callbench_launcher::process::set_interrupted(code);
                cancel.store(true, Ordering::Relaxed);
                eprintln!("\ncallbench: interrupted, writing what was measured (again to quit at once)");
                stream.recv().await;
                callbench_launcher::process::kill_all();
                std::process::exit(code);
            });
        }
    }
}
