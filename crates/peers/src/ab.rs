//! ApacheBench (`ab`, Debian's apache2-utils): HTTP/1.1 with keep-alive, closed loop, one thread.
//! Its text report rounds percentiles to whole milliseconds; `-e` writes them to a CSV file with
//! fractions, which is what is read.

use crate::claims::{Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Ab;

const BODY: &str = "callbench-body.json";
const PERCENTILES: &str = "ab-percentiles.csv";
/// ab sizes its per-call table by `-n` up front; a cap of this many calls per second of run keeps
/// that table small while staying far above what one ab thread reaches.
const CALLS_PER_SECOND_CAP: u64 = 100_000;

impl Tool for Ab {
    fn name(&self) -> &'static str {
        "ab"
    }
    fn program(&self) -> &'static str {
        "ab"
    }
    fn install(&self) -> &'static str {
        "apt-get install apache2-utils (Debian 12: ab 2.3)"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["-V"]
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        match load.protocol {
            Protocol::Http1 => {}
            Protocol::Http2 => return Err(PeerError::Unsupported("ab speaks HTTP/1.x only".into())),
            Protocol::Grpc => return Err(PeerError::Unsupported("ab has no gRPC".into())),
        }
        if load.rate.is_some() {
            return Err(PeerError::Unsupported("ab has no fixed rate".into()));
        }
        let concurrency = load.concurrency.max(1);
        // -k: keep-alive; without it ab opens a connection per call (seed 002 ran it so).
        let mut i =
            Invocation::new(if load.new_connection_per_call { vec!["ab", "-q"] } else { vec!["ab", "-k", "-q"] });
        i.args(["-c", &concurrency.to_string(), "-t", &load.seconds().to_string()]);
        // -n after -t: -t alone caps the run at 50,000 calls.
        i.args(["-n", &(load.seconds() * CALLS_PER_SECOND_CAP).to_string()]);
        i.args(["-e", &load.dir.join(PERCENTILES).display().to_string()]);
        i.args(["-H", &format!("Accept-Encoding: {}", load.accept_encoding())]);
        if let Some(body) = &load.call.body {
            let path = load.dir.join(BODY).display().to_string();
            let flag = if load.call.method == "PUT" { "-u" } else { "-p" };
            i.args([flag, &path, "-T", load.content_type()]);
            i.files.push((BODY.into(), body.clone()));
        } else if load.call.method != "GET" {
            i.args(["-m", &load.call.method]);
        }
        i.arg(load.url());
        i.outputs.push(PERCENTILES.into());
        if load.connections.is_some_and(|c| c != concurrency) {
            i.approximated(format!("ab keeps one call in flight per connection: {concurrency} connections"));
        }
        if load.threads > 1 {
            i.approximated("ab has one thread: it uses one of the client CPUs");
        }
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let text = &output.stdout;
    let field = |name: &str| -> Result<f64, String> {
        let line = text.lines().find(|l| l.starts_with(name)).ok_or(format!("no '{name}' line"))?;
        let value = line[name.len()..].split_whitespace().next().unwrap_or_default();
        value.parse().map_err(|_| format!("'{name}' is not a number: {line}"))
    };
    let complete = field("Complete requests:")? as u64;
    let failed = field("Failed requests:")? as u64;
    let non2xx = field("Non-2xx responses:").unwrap_or(0.0) as u64;
    let mut claims = Claims {
        seconds: field("Time taken for tests:")?,
        throughput: field("Requests per second:")?,
        ..Claims::default()
    };
    // ab counts a call whose answer length differs from the first one's as failed too, though
    // it was answered; a failure is connect, receive, length or exception.
    claims.ok = complete.saturating_sub(failed.max(non2xx));
    claims.errors = failed.max(non2xx);
    if failed > 0 {
        claims.error_kinds.insert("failed".into(), failed);
    }
    if non2xx > 0 {
        claims.error_kinds.insert("non-2xx".into(), non2xx);
    }
    claims.latency = percentiles(output.file(PERCENTILES)?)?;
    if let Ok(mean) = field("Time per request:") {
        // The first "Time per request" line is the mean per call across all in flight (ms).
        claims.latency.insert("mean", mean * 1e3);
    }
    Ok(claims)
}

/// ab's `-e` file: "Percentage served,Time in ms" then one line per percent 0..=100.
fn percentiles(csv: &str) -> Result<Latency, String> {
    let mut latency = Latency::new();
    for line in csv.lines().skip(1) {
        let Some((percent, ms)) = line.split_once(',') else { continue };
        let (Ok(percent), Ok(ms)) = (percent.trim().parse::<u32>(), ms.trim().parse::<f64>()) else {
            return Err(format!("{PERCENTILES}: bad line '{line}'"));
        };
        let name = match percent {
            50 => "p50",
            90 => "p90",
            95 => "p95",
            99 => "p99",
            100 => "max",
            _ => continue,
        };
        latency.insert(name, ms * 1e3);
    }
    if latency.len() < 5 {
        return Err(format!("{PERCENTILES}: no percentiles"));
    }
    Ok(latency)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn its_command_keeps_connections_alive_and_puts_the_body() {
        let i = Ab.invocation(&testing::auth(Protocol::Http1)).unwrap();
        assert_eq!(
            i.command_line(),
            "ab -k -q -c 50 -t 10 -n 1000000 -e /tmp/run/ab-percentiles.csv -H 'Accept-Encoding: identity' \
             -u /tmp/run/callbench-body.json -T application/json http://127.0.0.1:8080/auth/4242"
        );
        assert!(Ab.invocation(&testing::load(Protocol::Http2)).unwrap_err().to_string().contains("HTTP/1"));
        let mut fresh = testing::load(Protocol::Http1);
        fresh.new_connection_per_call = true;
        assert!(Ab.invocation(&fresh).unwrap().command_line().starts_with("ab -q -c 50"), "no -k");
        assert!(crate::wrk::Wrk.invocation(&fresh).unwrap_err().to_string().contains("keeps its connections"));
    }

    #[test]
    fn parses_a_recorded_run() {
        let mut out = Output { stdout: testing::fixture("ab.txt"), ..Output::default() };
        out.files.insert(PERCENTILES.into(), testing::fixture("ab-percentiles.csv"));
        let c = Ab.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
        out.files.clear();
        assert!(matches!(Ab.parse(&out).unwrap_err(), PeerError::Report(m) if m.contains(PERCENTILES)));
    }
}
