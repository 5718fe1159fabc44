//! hey: HTTP/1.1 (HTTP/2 only over TLS), closed loop with one worker per call in flight; its rate
//! is per worker. Its text report gives latencies in seconds with four decimals (0.1 ms steps).

use crate::claims::{Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Hey;

const BODY: &str = "callbench-body.json";

impl Tool for Hey {
    fn name(&self) -> &'static str {
        "hey"
    }
    fn program(&self) -> &'static str {
        "hey"
    }
    fn install(&self) -> &'static str {
        "go install github.com/rakyll/hey@v0.1.4"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &[] // hey has no version flag; the runner records the version it installed
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        let workers = load.concurrency.max(1);
        let mut i = Invocation::new(["hey"]);
        match load.protocol {
            Protocol::Http1 => {}
            Protocol::Http2 if load.tls => {
                i.arg("-h2");
            }
            Protocol::Http2 => return Err(PeerError::Unsupported("hey speaks HTTP/2 only over TLS (no h2c)".into())),
            Protocol::Grpc => return Err(PeerError::Unsupported("hey has no gRPC".into())),
        }
        i.args(["-z", &format!("{}ms", load.duration.as_millis()), "-c", &workers.to_string()]);
        i.args(["-cpus", &load.threads.max(1).to_string(), "-m", &load.call.method]);
        i.args(["-H", &format!("Accept-Encoding: {}", load.accept_encoding())]);
        if !load.gzip {
            i.arg("-disable-compression");
        }
        if load.new_connection_per_call {
            i.arg("-disable-keepalive");
        }
        if let Some(rate) = load.rate {
            let per_worker = rate / workers as f64;
            i.args(["-q", &format!("{per_worker:.3}")]);
            i.approximated(format!(
                "hey's rate is per worker: -q {per_worker:.3} on each of {workers}, a worker waits for its \
                 previous call (latency not counted from the intended start)"
            ));
        }
        if let Some(body) = &load.call.body {
            i.args(["-D", &load.dir.join(BODY).display().to_string(), "-T", load.content_type()]);
            i.files.push((BODY.into(), body.clone()));
        }
        if load.connections.is_some_and(|c| c != workers) {
            i.approximated(format!("hey keeps a connection per worker: {workers} connections"));
        }
        i.arg(load.url());
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let text = &output.stdout;
    let seconds_after = |label: &str| -> Result<f64, String> {
        let line = text.lines().map(str::trim).find(|l| l.starts_with(label)).ok_or(format!("no '{label}' line"))?;
        line[label.len()..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or(format!("'{label}' is not a number: {line}"))
    };
    let mut claims =
        Claims { seconds: seconds_after("Total:")?, throughput: seconds_after("Requests/sec:")?, ..Claims::default() };
    let mut latency = Latency::new();
    latency.insert("max", seconds_after("Slowest:")? * 1e6);
    latency.insert("mean", seconds_after("Average:")? * 1e6);
    for (name, label) in [("p50", "50% in"), ("p90", "90% in"), ("p95", "95% in"), ("p99", "99% in")] {
        if let Ok(s) = seconds_after(label) {
            latency.insert(name, s * 1e6);
        }
    }
    claims.latency = latency;
    // "[200]	88160 responses" under "Status code distribution:"; "[N]	message" under "Error distribution:".
    let mut section = "";
    for line in text.lines().map(str::trim) {
        if line.ends_with("distribution:") {
            section = line;
            continue;
        }
        let Some((code, rest)) = line.strip_prefix('[').and_then(|l| l.split_once(']')) else { continue };
        match section {
            "Status code distribution:" => {
                claims.add_status(code, rest.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0));
            }
            "Error distribution:" => {
                let n: u64 = code.parse().unwrap_or(0);
                claims.errors = claims.errors.saturating_add(n);
                claims.add_error_kind(rest.trim().chars().take(80).collect(), n);
            }
            _ => {}
        }
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn its_rate_is_split_over_workers_and_said_so() {
        let mut l = testing::auth(Protocol::Http1);
        l.rate = Some(500.0);
        let i = Hey.invocation(&l).unwrap();
        assert_eq!(
            i.command_line(),
            "hey -z 10000ms -c 50 -cpus 1 -m PUT -H 'Accept-Encoding: identity' -disable-compression -q 10.000 \
             -D /tmp/run/callbench-body.json -T application/json http://127.0.0.1:8080/auth/4242"
        );
        assert!(i.approximations[0].contains("per worker"));
        assert!(Hey.invocation(&testing::load(Protocol::Http2)).unwrap_err().to_string().contains("h2c"));
    }

    #[test]
    fn parses_a_recorded_run() {
        let out = Output { stdout: testing::fixture("hey.txt"), ..Output::default() };
        let c = Hey.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
    }
}
