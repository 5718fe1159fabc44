//! `callbench verify`: the central conformance check. Every vector of the
//! contract is sent to the server and judged; then a flood of bad input, after
//! which the server must be alive, not growing, and still answer correctly.

pub mod body;
pub mod check;
pub mod dial;
mod echo;
mod engine_client;
mod error;
mod flood;
mod grpc;
pub mod gzip;
pub mod http1;
mod http3;
mod keepalive;
pub mod probe;
mod reflection;
mod report;
mod slow_clients;

pub use error::VerifyError;
pub use report::{Outcome, Report, Step};

use callbench_contract::vectors;
use callbench_launcher::manifest::{Manifest, Protocol};
use callbench_launcher::process::{ServerProcess, StartOptions};
use callbench_launcher::repo::Repo;
use callbench_primitives::boxed::Boxed;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Bad requests in each of the two flood rounds (0: no flood).
    pub flood_requests: usize,
    pub flood_connections: usize,
    /// Modes to start a named server in (auth is re-checked in each).
    pub modes: Vec<String>,
    pub workers: usize,
    pub ready_timeout: Duration,
    /// Start named servers with TLS and verify them over it.
    pub tls: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            flood_requests: 2000,
            flood_connections: 8,
            modes: vec!["preloaded".into(), "per-request".into()],
            workers: 1,
            ready_timeout: Duration::from_secs(60),
            tls: false,
        }
    }
}

/// Turns the failures of vectors the manifest declares as deviations into `deviation` outcomes
/// (not failures), saying what the server did and why. Only bad-input vectors can be declared: a
/// valid call answered wrongly is always a failure.
pub fn apply_deviations(manifest: &Manifest, outcomes: &mut [Outcome]) {
    for o in outcomes.iter_mut() {
        let Some(d) = manifest.deviations.iter().find(|d| d.vector == o.name) else { continue };
        if o.class == "ok" {
            continue;
        }
        if let Some(what) = o.failure.take() {
            o.name = format!("{} (declared deviation: {}; the server answered: {what})", o.name, d.reason);
            o.class = "deviation".into();
        }
    }
}

/// Sends every vector of `protocol` (of one workload, if given) and judges the answers.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn run_vectors(protocol: Protocol, addr: SocketAddr, workload: Option<&str>) -> Boxed<'_, Vec<Outcome>> {
    Box::pin(vectors_here(protocol, addr, workload))
}

async fn vectors_here(protocol: Protocol, addr: SocketAddr, workload: Option<&str>) -> Vec<Outcome> {
    if protocol == Protocol::Raw {
        // The contract's vectors are calls; an echo has its own checks (the engine's raw:// call included).
        return echo::check_echo(addr).await;
    }
    let mut outcomes = Vec::new();
    for file in vectors::all().into_iter().filter(|f| workload.is_none_or(|w| f.workload == w)) {
        for v in &file.vectors {
            let result = match (protocol, &v.rest, &v.grpc) {
                (Protocol::Rest, Some(case), _) => check::check_rest(addr, case).await,
                (Protocol::Grpc, _, Some(case)) => check::check_grpc(addr, case).await,
                _ => continue,
            };
            let failure = result.err().map(|e| e.to_string());
            outcomes.push(Outcome { name: v.name.clone(), class: v.class.clone(), failure });
        }
    }
    outcomes
}

/// Sends every REST vector to the HTTP/3 server on `addr`'s UDP port (verify's own h3 client).
async fn run_vectors_over_http3(addr: SocketAddr) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for file in vectors::all() {
        for v in file.vectors.iter().filter(|v| v.rest.is_some()) {
            let case = v.rest.as_ref().expect("a REST case");
            let failure = http3::check_rest(addr, case).await.err().map(|e| format!("over HTTP/3: {e}"));
            outcomes.push(Outcome { name: v.name.clone(), class: v.class.clone(), failure });
        }
    }
    outcomes
}

/// Sends every vector of `protocol` again through the load engine's own client (see
/// engine_client.rs): the step's outcomes, and the vectors the engine cannot send, with why.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn run_vectors_through_engine(protocol: Protocol, addr: SocketAddr) -> Boxed<'static, (Vec<Outcome>, Vec<String>)> {
    Box::pin(through_engine_here(protocol, addr))
}

async fn through_engine_here(protocol: Protocol, addr: SocketAddr) -> (Vec<Outcome>, Vec<String>) {
    let (mut outcomes, mut not_sent) = (Vec::new(), Vec::new());
    if protocol == Protocol::Raw {
        return (outcomes, vec!["raw: the echo's checks already call it through the engine".into()]);
    }
    for file in vectors::all() {
        for v in &file.vectors {
            let sent = match (protocol, &v.rest, &v.grpc) {
                (Protocol::Rest, Some(case), _) => engine_client::check_rest(addr, case).await,
                (Protocol::Grpc, _, Some(case)) => engine_client::check_grpc(addr, case).await,
                _ => continue,
            };
            match sent {
                engine_client::Sent::Judged(result) => {
                    let failure = result.err().map(|e| format!("through the engine's client: {e}"));
                    outcomes.push(Outcome { name: v.name.clone(), class: v.class.clone(), failure });
                }
                engine_client::Sent::NotSendable(why) => not_sent.push(format!("{} ({why})", v.name)),
            }
        }
    }
    (outcomes, not_sent)
}

/// The step of the vectors sent through the engine's client.
async fn engine_step(protocol: Protocol, addr: SocketAddr, manifest: Option<&Manifest>) -> Step {
    let (mut outcomes, not_sent) = run_vectors_through_engine(protocol, addr).await;
    if let Some(m) = manifest {
        apply_deviations(m, &mut outcomes);
    }
    let title = match not_sent.len() {
        0 => "vectors through the load engine's client".to_string(),
        _ => format!("vectors through the load engine's client (not sent: {})", not_sent.join("; ")),
    };
    Step { title, outcomes }
}

/// Verifies a server that is already running at `addr` (no memory check: its pid is unknown).
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn verify_address(
    protocol: Protocol,
    addr: SocketAddr,
    options: &VerifyOptions,
) -> Boxed<'_, Result<Report, VerifyError>> {
    Box::pin(verify_address_here(protocol, addr, options))
}

async fn verify_address_here(
    protocol: Protocol,
    addr: SocketAddr,
    options: &VerifyOptions,
) -> Result<Report, VerifyError> {
    tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| VerifyError::Unreachable(format!("cannot connect to {addr}: timed out")))?
        .map_err(|e| VerifyError::Unreachable(error::because(format!("cannot connect to {addr}"), &e)))?;
    let mut report = Report::default();
    report.steps.push(Step {
        title: format!("vectors ({protocol} at {addr})"),
        outcomes: run_vectors(protocol, addr, None).await,
    });
    report.steps.push(engine_step(protocol, addr, None).await);
    report.steps.push(Step { title: "gzip both ways".into(), outcomes: gzip::check_gzip(protocol, addr).await });
    if protocol == Protocol::Grpc {
        report.steps.push(reflection_step(addr).await);
    }
    if options.flood_requests > 0 && protocol != Protocol::Raw {
        report.steps.push(flood_step(protocol, addr, None, options).await);
        if protocol == Protocol::Rest {
            report.steps.push(keepalive_step(addr).await);
        }
        report.steps.push(slow_clients_step(protocol, addr, None).await);
    }
    Ok(report)
}

/// Starts the server of `manifest` on a free loopback port in each mode, verifies it, and stops it.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn verify_server<'a>(
    repo: &'a Repo,
    manifest: &'a Manifest,
    options: &'a VerifyOptions,
) -> Boxed<'a, Result<Report, VerifyError>> {
    Box::pin(verify_server_here(repo, manifest, options))
}

async fn verify_server_here(repo: &Repo, manifest: &Manifest, options: &VerifyOptions) -> Result<Report, VerifyError> {
    let mut report = Report::default();
    for (i, mode) in options.modes.iter().enumerate() {
        let start =
            StartOptions { workers: options.workers, mode: mode.clone(), tls: options.tls, ..StartOptions::default() };
        let mut server = ServerProcess::start(repo, manifest, &start)?;
        if options.tls {
            dial::speaks_tls(server.addr);
        }
        probe::wait_ready(&mut server, manifest.protocol, options.ready_timeout).await?;
        // The first mode gets every vector and the flood; later modes re-check auth, the workload they change.
        let workload = if i == 0 { None } else { Some("auth") };
        let mut outcomes = run_vectors(manifest.protocol, server.addr, workload).await;
        apply_deviations(manifest, &mut outcomes);
        report.steps.push(Step { title: format!("vectors, mode {mode}"), outcomes });
        if i == 0 {
            report.steps.push(engine_step(manifest.protocol, server.addr, Some(manifest)).await);
            let outcomes = gzip::check_gzip(manifest.protocol, server.addr).await;
            report.steps.push(Step { title: "gzip both ways".into(), outcomes });
            // A server whose TLS start serves HTTP/3 too gets every REST vector again over QUIC.
            if options.tls && manifest.http3().is_ok() {
                let mut outcomes = run_vectors_over_http3(server.addr).await;
                apply_deviations(manifest, &mut outcomes);
                report.steps.push(Step { title: "vectors over HTTP/3 (QUIC)".into(), outcomes });
            }
            // Over plain TCP, as the other steps of `--tls` are over TLS.
            if manifest.protocol == Protocol::Grpc && !options.tls {
                report.steps.push(reflection_step(server.addr).await);
            }
        }
        // An echo has no bad input: every byte is its input.
        if i == 0 && options.flood_requests > 0 && manifest.protocol != Protocol::Raw {
            report.steps.push(flood_step(manifest.protocol, server.addr, Some(&mut server), options).await);
            // Over plain TCP: the TLS connections of `--tls` are the flood's.
            if manifest.protocol == Protocol::Rest && !options.tls {
                report.steps.push(keepalive_step(server.addr).await);
            }
            if !options.tls {
                report.steps.push(slow_clients_step(manifest.protocol, server.addr, Some(&mut server)).await);
            }
        }
        let status = server.stop(Duration::from_secs(5));
        dial::plain(server.addr);
        let clean = status.is_some_and(|s| s.success() || s.code().is_none() && s.signal_is_term());
        report.steps.push(Step {
            title: format!("stop, mode {mode}"),
            outcomes: vec![Outcome {
                name: "stops-on-sigterm".into(),
                class: "ok".into(),
                failure: (!clean).then(|| {
                    // What the server said as it was asked to stop: why it did not.
                    let tail = server.output_tail();
                    let last: Vec<&str> = tail.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect();
                    format!(
                        "did not exit cleanly on SIGTERM within 5 s ({status:?}); its last lines: {}",
                        last.join(" | ")
                    )
                }),
            }],
        });
    }
    Ok(report)
}

async fn reflection_step(addr: SocketAddr) -> Step {
    Step { title: "reflection as grpcurl and ghz use it".into(), outcomes: reflection::check_reflection(addr).await }
}

/// Two flood rounds; the server must survive, not keep growing, and still pass the ok vectors.
async fn flood_step(
    protocol: Protocol,
    addr: SocketAddr,
    mut server: Option<&mut ServerProcess>,
    options: &VerifyOptions,
) -> Step {
    let mut outcomes = Vec::new();
    let mut rss = Vec::new();
    for round in 1..=2 {
        let result = flood::flood(protocol, addr, options.flood_requests, options.flood_connections).await;
        let alive = server.as_mut().is_none_or(|s| s.exited().is_none());
        let failure = match (&result, alive) {
            (_, false) => Some("the server died during the flood".to_string()),
            (Err(e), _) => Some(e.to_string()),
            (Ok(_), true) => None,
        };
        let name =
            match &result {
                Ok(s) => {
                    format!(
                "flood-round-{round}: {} bad requests over {} connections in {:.1} s, {} reconnects, {} unanswered",
                s.requests, options.flood_connections, s.elapsed.as_secs_f64(), s.reconnects, s.unanswered
            )
                }
                Err(_) => format!("flood-round-{round}"),
            };
        outcomes.push(Outcome { name, class: "flood".into(), failure });
        rss.push(server.as_ref().and_then(|s| s.rss_kib()));
    }
    if let [Some(first), Some(second)] = rss[..] {
        // Growth after the first round (which warms caches and pools) means memory is kept per bad request.
        let limit = first + first / 2 + 20 * 1024;
        let failure =
            (second > limit).then(|| format!("RSS grew from {first} KiB to {second} KiB over the second round"));
        outcomes.push(Outcome {
            name: format!("flood-memory: RSS {first} KiB after round 1, {second} KiB after round 2"),
            class: "flood".into(),
            failure,
        });
    }
    let still_ok: Vec<Outcome> =
        run_vectors(protocol, addr, None).await.into_iter().filter(|o| o.class == "ok").collect();
    let failed: Vec<String> =
        still_ok.iter().filter_map(|o| o.failure.as_ref().map(|f| format!("{}: {f}", o.name))).collect();
    outcomes.push(Outcome {
        name: format!("after-flood: {} valid vectors answered correctly", still_ok.len() - failed.len()),
        class: "flood".into(),
        failure: (!failed.is_empty()).then(|| failed.join("; ")),
    });
    Step { title: "flood of bad input".into(), outcomes }
}

/// Two rounds of idle, dripping and half-closed connections held open while every valid vector
/// is sent on connections of its own: each must be answered, the server must live, and its RSS
/// must not keep growing from one round to the next.
async fn slow_clients_step(protocol: Protocol, addr: SocketAddr, mut server: Option<&mut ServerProcess>) -> Step {
    let mut outcomes = Vec::new();
    let mut rss = Vec::new();
    for round in 1..=2 {
        let (held, answers) = slow_clients::hold(protocol, addr, run_vectors(protocol, addr, None)).await;
        let ok: Vec<Outcome> = answers.into_iter().filter(|o| o.class == "ok").collect();
        let failed: Vec<String> =
            ok.iter().filter_map(|o| o.failure.as_ref().map(|f| format!("{}: {f}", o.name))).collect();
        let alive = server.as_mut().is_none_or(|s| s.exited().is_none());
        let failure = if !alive {
            Some("the server died while slow clients were held".to_string())
        } else if !failed.is_empty() {
            Some(format!("valid calls failed while slow clients were held: {}", failed.join("; ")))
        } else if held.refused > 0 {
            Some(format!("{} connections refused or reset as they were opened", held.refused))
        } else {
            None
        };
        let name = format!(
            "slow-clients-round-{round}: {} idle, {} dripping a byte per 100 ms, {} half-closed connections held {:.1} s; {} valid vectors answered",
            held.idle,
            held.dripping,
            held.half_closed,
            held.held_for.as_secs_f64(),
            ok.len() - failed.len()
        );
        outcomes.push(Outcome { name, class: "flood".into(), failure });
        rss.push(server.as_ref().and_then(|s| s.rss_kib()));
    }
    if let [Some(first), Some(second)] = rss[..] {
        let limit = first + first / 2 + 20 * 1024;
        outcomes.push(Outcome {
            name: format!("slow-clients-memory: RSS {first} KiB after round 1, {second} KiB after round 2"),
            class: "flood".into(),
            failure: (second > limit).then(|| format!("RSS grew from {first} KiB to {second} KiB over round 2")),
        });
    }
    Step { title: "slow, idle and half-closed clients".into(), outcomes }
}

/// Bad requests with bodies, each followed by a good one on the same connection.
const KEEPALIVE_PAIRS: usize = 3000;

async fn keepalive_step(addr: SocketAddr) -> Step {
    let outcome = match keepalive::bad_then_good(addr, KEEPALIVE_PAIRS).await {
        Ok(stats) => {
            let name = format!(
                "bad-then-good: {} refusals each followed by a good request on the same connection ({} connections \
                 at once), {} announced Connection: close, {} closed silently",
                stats.pairs,
                keepalive::CONNECTIONS,
                stats.announced,
                stats.silent.len()
            );
            let failure = (!stats.silent.is_empty()).then(|| {
                let mut firsts: Vec<&str> = stats.silent.iter().map(String::as_str).take(3).collect();
                firsts.dedup();
                format!(
                    "{} good requests failed on a connection the server closed without Connection: close, e.g. {}",
                    stats.silent.len(),
                    firsts.join("; ")
                )
            });
            Outcome { name, class: "flood".into(), failure }
        }
        Err(e) => Outcome { name: "bad-then-good".into(), class: "flood".into(), failure: Some(e.to_string()) },
    };
    Step { title: "keep-alive after a refusal".into(), outcomes: vec![outcome] }
}

trait SignalIsTerm {
    fn signal_is_term(&self) -> bool;
}

impl SignalIsTerm for std::process::ExitStatus {
    fn signal_is_term(&self) -> bool {
        use std::os::unix::process::ExitStatusExt;
        self.signal() == Some(libc::SIGTERM)
    }
}

/// Parses `http://host:port` or `grpc://host:port` into a protocol and address.
pub fn parse_address(target: &str) -> Result<(Protocol, SocketAddr), VerifyError> {
    let schemes = [("http://", Protocol::Rest, false), ("https://", Protocol::Rest, true)];
    let schemes = schemes.into_iter().chain([("grpc://", Protocol::Grpc, false), ("grpcs://", Protocol::Grpc, true)]);
    let Some((rest, protocol, tls)) =
        schemes.into_iter().find_map(|(s, p, tls)| Some((target.strip_prefix(s)?, p, tls)))
    else {
        return Err(VerifyError::BadInput(format!(
            "'{target}' is neither a server name nor http(s)://host:port or grpc(s)://host:port"
        )));
    };
    let hostport = rest.trim_end_matches('/');
    let addr = std::net::ToSocketAddrs::to_socket_addrs(hostport)
        .map_err(|e| VerifyError::BadInput(error::because(format!("cannot resolve '{hostport}'"), &e)))?
        .next()
        .ok_or_else(|| VerifyError::BadInput(format!("'{hostport}' resolves to no address")))?;
    if tls {
        dial::speaks_tls(addr);
    }
    Ok((protocol, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_that_is_no_address_is_bad_input() {
        for target in ["localhost:80", "ftp://127.0.0.1:21", "http://127.0.0.1"] {
            let e = parse_address(target).unwrap_err();
            assert!(matches!(e, VerifyError::BadInput(_)), "{target}: {e:?}");
        }
        let e = parse_address("localhost:80").unwrap_err();
        assert_eq!(
            e.to_string(),
            "'localhost:80' is neither a server name nor http(s)://host:port or grpc(s)://host:port"
        );
        assert_eq!(parse_address("grpc://127.0.0.1:9/").unwrap(), (Protocol::Grpc, ([127, 0, 0, 1], 9).into()));
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable() {
        let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let e = verify_address(Protocol::Rest, addr, &VerifyOptions::default()).await.unwrap_err();
        assert!(
            matches!(&e, VerifyError::Unreachable(m) if m.starts_with(&format!("cannot connect to {addr}: "))),
            "{e:?}"
        );
    }

    fn outcome(name: &str, class: &str, failure: Option<&str>) -> Outcome {
        Outcome { name: name.into(), class: class.into(), failure: failure.map(str::to_string) }
    }

    #[test]
    fn only_declared_bad_input_failures_become_deviations() {
        let text = "name='x'\nlanguage='l'\nframework='f'\nprotocol='grpc'\n[start]\ncommand=['x']\n\
                    [[deviation]]\nvector='bad-ct'\nreason='the framework'\n\
                    [[deviation]]\nvector='ok-call'\nreason='cannot excuse a valid call'";
        let manifest: Manifest = toml::from_str(text).unwrap();
        let mut outcomes = vec![
            outcome("bad-ct", "content-type", Some("OK (expected an error status)")),
            outcome("ok-call", "ok", Some("reply differs")),
            outcome("other", "limits", Some("OK")),
        ];
        apply_deviations(&manifest, &mut outcomes);
        assert_eq!(outcomes[0].class, "deviation");
        assert!(outcomes[0].failure.is_none() && outcomes[0].name.contains("the framework"));
        assert!(outcomes[1].failure.is_some(), "a valid call can never be declared");
        assert!(outcomes[2].failure.is_some());
        let report = Report { steps: vec![Step { title: "t".into(), outcomes }] };
        assert_eq!((report.passed(), report.failed(), report.deviations()), (0, 2, 1));
        assert_eq!(report.summary(), "0 passed, 2 failed, 1 declared deviation(s)");
    }
}
