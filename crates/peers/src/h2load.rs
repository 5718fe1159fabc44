//! h2load (Debian's nghttp2-client): HTTP/2 (h2c with prior knowledge, h2 over TLS) or HTTP/1.1
//! (`--h1`), closed loop. Its report gives no percentiles, only min/max/mean; they come from its
//! own per-request log (`--log-file`). gRPC is sent as what it is on the wire (a framed message in
//! a POST with gRPC's headers), but h2load does not read grpc-status. Run without its log (as
//! bench/engine.py runs it), the mean and max of its report are its latency.

use crate::claims::{latency_of, micros, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct H2load;

const BODY: &str = "callbench-body.bin";
const LOG: &str = "h2load-requests.log";

impl Tool for H2load {
    fn name(&self) -> &'static str {
        "h2load"
    }
    fn program(&self) -> &'static str {
        "h2load"
    }
    fn install(&self) -> &'static str {
        "apt-get install nghttp2-client (Debian 12: h2load 1.52.0)"
    }

    fn warms_up(&self) -> bool {
        true
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        load.keeps_connections("h2load")?;
        let concurrency = load.concurrency.max(1);
        let mut i = Invocation::new(["h2load"]);
        let (clients, streams) = match load.protocol {
            // HTTP/1.1: -m would pipeline; one call in flight per connection as every HTTP/1.1 client.
            Protocol::Http1 => {
                i.arg("--h1");
                if load.connections.is_some_and(|c| c != concurrency) {
                    i.approximated(format!("HTTP/1.1 without pipelining: {concurrency} connections"));
                }
                (concurrency, 1)
            }
            Protocol::Http2 | Protocol::Grpc => {
                let clients = load.connections.unwrap_or(1).clamp(1, concurrency);
                let streams = load.streams_per_connection().max(concurrency.div_ceil(clients));
                if clients * streams != concurrency {
                    i.approximated(format!(
                        "h2load keeps the same streams on every connection: {clients} × {streams} in flight"
                    ));
                }
                (clients, streams)
            }
        };
        let threads = load.threads.clamp(1, clients);
        i.args(["-c", &clients.to_string(), "-m", &streams.to_string(), "-t", &threads.to_string()]);
        i.args(["-D", &load.seconds().to_string(), "--log-file", &load.dir.join(LOG).display().to_string()]);
        if !load.warmup.is_zero() {
            i.arg(format!("--warm-up-time={}ms", load.warmup.as_millis()));
        }
        if let Some(rate) = load.rate {
            let per_client = rate / clients as f64;
            i.args(["--rps", &format!("{per_client:.3}")]);
            i.approximated(format!(
                "h2load's rate is per connection: --rps {per_client:.3} on each of {clients}, calls sent as the \
                 previous ones end (not counted from their intended start)"
            ));
        }
        if load.protocol == Protocol::Grpc {
            let mut framed = vec![0u8];
            framed.extend((load.call.grpc_message.len() as u32).to_be_bytes());
            framed.extend(&load.call.grpc_message);
            i.files.push((BODY.into(), framed));
            i.args(["-d", &load.dir.join(BODY).display().to_string()]);
            i.args(["-H", "content-type: application/grpc", "-H", "te: trailers"]);
            i.approximated("h2load does not read grpc-status: an HTTP 200 counts as success");
            let scheme = if load.tls { "https" } else { "http" };
            i.arg(format!("{scheme}://{}/{}", load.authority, load.call.grpc_method));
        } else {
            if let Some(body) = &load.call.body {
                i.files.push((BODY.into(), body.clone()));
                i.args(["-d", &load.dir.join(BODY).display().to_string()]);
                i.args(["-H", &format!("content-type: {}", load.content_type())]);
            }
            if load.call.method != "GET" && !(load.call.method == "POST" && load.call.body.is_some()) {
                i.args(["-H", &format!(":method: {}", load.call.method)]);
            }
            i.args(["-H", &format!("accept-encoding: {}", load.accept_encoding())]);
            i.arg(load.url());
        }
        i.outputs.push(LOG.into());
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let text = &output.stdout;
    let finished = text.lines().find(|l| l.starts_with("finished in ")).ok_or("no 'finished in' line")?;
    let mut claims = Claims { seconds: seconds(finished)?, ..Claims::default() };
    claims.throughput = finished
        .split(", ")
        .find_map(|p| p.strip_suffix(" req/s"))
        .and_then(|v| v.parse().ok())
        .ok_or(format!("no req/s in '{finished}'"))?;
    let requests = text.lines().find(|l| l.starts_with("requests: ")).ok_or("no 'requests:' line")?;
    let count = |what: &str| -> Result<u64, String> {
        requests
            .split(", ")
            .find_map(|p| p.trim_start_matches("requests: ").strip_suffix(&format!(" {what}")))
            .and_then(|v| v.parse().ok())
            .ok_or(format!("no '{what}' count in '{requests}'"))
    };
    claims.ok = count("succeeded")?;
    // h2load's counts nest: timeout ⊆ errored (network failures) ⊆ failed (with bad statuses).
    let (failed, errored, timeout) = (count("failed")?, count("errored")?, count("timeout")?);
    claims.errors = failed;
    for (kind, n) in
        [("status", failed.saturating_sub(errored)), ("errored", errored - timeout.min(errored)), ("timeout", timeout)]
    {
        if n > 0 {
            claims.error_kinds.insert(kind.into(), n);
        }
    }
    claims.latency = match output.files.get(LOG) {
        Some(log) => latency_of(log_durations(log)?),
        None => request_times(text),
    };
    Ok(claims)
}

/// The mean and max of "time for request:  34us  80.10ms  1.29ms  3.88ms  94.70%" (min, max, mean,
/// sd, within a sd), for a run without `--log-file`; none if it printed no such line.
fn request_times(text: &str) -> Latency {
    let mut latency = Latency::new();
    let times = text.lines().find_map(|l| l.strip_prefix("time for request:"));
    let times: Vec<&str> = times.map(|t| t.split_whitespace().collect()).unwrap_or_default();
    if let (Some(max), Some(mean)) = (times.get(1).and_then(|v| micros(v)), times.get(2).and_then(|v| micros(v))) {
        latency.insert("max", max);
        latency.insert("mean", mean);
    }
    latency
}

/// "finished in 2.00s, ..." (h2load prints ms, s or m).
fn seconds(line: &str) -> Result<f64, String> {
    let value = line.trim_start_matches("finished in ").split(',').next().unwrap_or_default();
    let (number, unit) = value.split_at(value.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(value.len()));
    let n: f64 = number.parse().map_err(|_| format!("bad duration in '{line}'"))?;
    Ok(match unit {
        "us" => n / 1e6,
        "ms" => n / 1e3,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("bad duration unit in '{line}'")),
    })
}

/// The third column of h2load's log: microseconds from the request's start to its response's end.
fn log_durations(log: &str) -> Result<Vec<f64>, String> {
    log.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split('\t').nth(2).and_then(|d| d.trim().parse::<f64>().ok()).ok_or(format!("{LOG}: bad line '{l}'"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn grpc_goes_as_a_framed_post_to_the_method_path() {
        let mut l = testing::load(Protocol::Grpc);
        l.call.grpc_message = vec![8, 1];
        l.connections = Some(2);
        let i = H2load.invocation(&l).unwrap();
        assert!(
            i.command_line().starts_with("h2load -c 2 -m 25 -t 1 -D 10 --log-file /tmp/run/h2load-requests.log -d"),
            "{}",
            i.command_line()
        );
        assert!(i.argv.last().unwrap().ends_with("127.0.0.1:8080/callbench.v1.Students/List"));
        assert_eq!(i.files[0].1, [0, 0, 0, 0, 2, 8, 1]);
        assert!(i.approximations.iter().any(|a| a.contains("grpc-status")));
    }

    #[test]
    fn http1_has_no_pipelining_and_a_rate_is_per_connection() {
        let mut l = testing::auth(Protocol::Http1);
        l.rate = Some(1000.0);
        let i = H2load.invocation(&l).unwrap();
        let line = i.command_line();
        assert!(
            line.contains("--h1 -c 50 -m 1") && line.contains("--rps 20.000") && line.contains(":method: PUT"),
            "{line}"
        );
        assert!(i.approximations.iter().any(|a| a.contains("per connection")));
    }

    #[test]
    fn parses_a_recorded_run() {
        let mut out = Output { stdout: testing::fixture("h2load.txt"), ..Output::default() };
        out.files.insert(LOG.into(), testing::fixture("h2load-requests.log"));
        let c = H2load.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
        assert_eq!(seconds("finished in 2.00s, 1 req/s").unwrap(), 2.0);
        assert_eq!(seconds("finished in 1.5m, 1 req/s").unwrap(), 90.0);
    }

    #[test]
    fn without_its_log_the_mean_and_max_of_its_report_are_the_latency() {
        // `h2load -t 1 -c 2 -m 4 -D 2 URL`, as bench/engine.py runs it: no --log-file.
        let out = Output { stdout: testing::fixture("h2load-plain.txt"), ..Output::default() };
        let c = H2load.parse(&out).unwrap();
        assert_eq!((c.ok, c.errors, c.seconds, c.throughput), (12194, 0, 2.02, 6097.0));
        assert_eq!(c.latency, Latency::from([("max", 80100.0), ("mean", 1290.0)]));
        // `--h1` to a server answering 20% of the calls with a 503: failed, all bad statuses.
        let out = Output { stdout: testing::fixture("h2load-plain-errors.txt"), ..Output::default() };
        let c = H2load.parse(&out).unwrap();
        assert_eq!((c.ok, c.errors, c.error_kinds["status"]), (16767, 4069, 4069));
        assert_eq!((c.latency["max"], c.latency["mean"]), (78390.0, 383.0));
    }
}
