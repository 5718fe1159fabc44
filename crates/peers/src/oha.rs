//! oha: HTTP/1.1 and HTTP/2 (h2c too), closed loop with `-c` connections (× `-p` streams each on
//! HTTP/2) or a total rate, with coordinated-omission correction when asked. Its JSON report
//! (seconds) is read.

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Oha;

const BODY: &str = "callbench-body.json";

impl Tool for Oha {
    fn name(&self) -> &'static str {
        "oha"
    }
    fn program(&self) -> &'static str {
        "oha"
    }
    fn install(&self) -> &'static str {
        "cargo install --locked oha --version 1.16.0"
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        let concurrency = load.concurrency.max(1);
        let mut i = Invocation::new(["oha", "--no-tui", "--output-format", "json"]);
        match load.protocol {
            Protocol::Http1 => {
                i.args(["-c", &concurrency.to_string()]);
                if load.connections.is_some_and(|c| c != concurrency) {
                    i.approximated(format!(
                        "oha keeps one HTTP/1.1 call in flight per connection: {concurrency} connections"
                    ));
                }
            }
            Protocol::Http2 => {
                let connections = load.connections.unwrap_or(1).clamp(1, concurrency);
                let streams = concurrency.div_ceil(connections);
                i.args(["--http2", "-c", &connections.to_string(), "-p", &streams.to_string()]);
                if connections * streams != concurrency {
                    i.approximated(format!(
                        "oha keeps the same streams on every connection: {connections} × {streams}"
                    ));
                }
            }
            Protocol::Grpc => return Err(PeerError::Unsupported("oha has no gRPC".into())),
        }
        // -w: calls in flight at the end are waited for, not counted as errors ("aborted due to deadline").
        i.args(["-z", &format!("{}ms", load.duration.as_millis()), "-w", "-m", &load.call.method]);
        i.args(["-H", &format!("Accept-Encoding: {}", load.accept_encoding())]);
        if let Some(rate) = load.rate {
            // Latency from each call's intended start, as callbench counts it.
            i.args(["-q", &format!("{rate:.3}"), "--latency-correction"]);
        }
        if let Some(body) = &load.call.body {
            i.args(["-D", &load.dir.join(BODY).display().to_string(), "-T", load.content_type()]);
            i.files.push((BODY.into(), body.clone()));
        }
        if load.tls {
            i.arg("--insecure");
        }
        if load.new_connection_per_call {
            i.arg("--disable-keepalive");
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
    let d: serde_json::Value = serde_json::from_str(&output.stdout).map_err(|e| format!("its JSON report: {e}"))?;
    let s = &d["summary"];
    let mut claims = Claims {
        seconds: number(&s["total"], "summary.total")?,
        throughput: number(&s["requestsPerSec"], "summary.requestsPerSec")?,
        ..Claims::default()
    };
    for (code, n) in d["statusCodeDistribution"].as_object().into_iter().flatten() {
        claims.add_status(code, n.as_u64().unwrap_or(0));
    }
    // Calls cut by the deadline (in flight at the end of a run without -w, as bench/engine.py runs it)
    // are neither successes nor errors, as wrk and h2load do not count theirs.
    let errors = d["errorDistribution"].as_object().into_iter().flatten();
    for (why, n) in errors.filter(|(why, _)| why.as_str() != "aborted due to deadline") {
        let n = n.as_u64().unwrap_or(0);
        claims.errors = claims.errors.saturating_add(n);
        claims.error_kinds.insert(why.chars().take(80).collect(), n);
    }
    let p = &d["latencyPercentiles"];
    let mut latency = Latency::new();
    for (name, key) in [("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99")] {
        latency.insert(name, number(&p[key], key)? * 1e6);
    }
    latency.insert("max", number(&s["slowest"], "summary.slowest")? * 1e6);
    latency.insert("mean", number(&s["average"], "summary.average")? * 1e6);
    claims.latency = latency;
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn a_rate_asks_for_latency_correction() {
        let mut l = testing::load(Protocol::Http2);
        l.rate = Some(2000.0);
        l.connections = Some(5);
        let i = Oha.invocation(&l).unwrap();
        assert_eq!(
            i.command_line(),
            "oha --no-tui --output-format json --http2 -c 5 -p 10 -z 10000ms -w -m GET -H 'Accept-Encoding: identity' \
             -q 2000.000 --latency-correction http://127.0.0.1:8080/students"
        );
        assert!(Oha.invocation(&testing::load(Protocol::Grpc)).is_err());
    }

    #[test]
    fn parses_a_recorded_run() {
        let out = Output { stdout: testing::fixture("oha.json"), ..Output::default() };
        let c = Oha.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
    }

    #[test]
    fn calls_cut_by_the_deadline_are_neither_successes_nor_errors() {
        // Without -w (as bench/engine.py runs it), to a server answering 20% of the calls with a 503:
        // {"200": 34624, "503": 8702}, {"aborted due to deadline": 8}.
        let out = Output { stdout: testing::fixture("oha-plain.json"), ..Output::default() };
        let c = Oha.parse(&out).unwrap();
        assert_eq!((c.ok, c.errors), (34624, 8702));
        assert_eq!(c.error_kinds.keys().collect::<Vec<_>>(), ["status 503"]);
        assert!((c.seconds - 2.004808526).abs() < 1e-9 && (c.latency["max"] - 56025.026).abs() < 1e-6, "{c:?}");
    }
}
