//! fortio: HTTP/1.1 with its own fast client, HTTP/2 (h2c too) through Go's standard client,
//! closed loop or a total rate over its connections; its gRPC mode calls only fortio's own ping
//! service or the health check. Its JSON report (`-json`) is read.

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Fortio;

const BODY: &str = "callbench-body.json";
const REPORT: &str = "fortio.json";

impl Tool for Fortio {
    fn name(&self) -> &'static str {
        "fortio"
    }
    fn program(&self) -> &'static str {
        "fortio"
    }
    fn install(&self) -> &'static str {
        "go install fortio.org/fortio@v1.68.2"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["version"]
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        let connections = load.concurrency.max(1);
        let mut i = Invocation::new(["fortio", "load", "-quiet"]);
        match load.protocol {
            Protocol::Http1 => {}
            Protocol::Http2 => {
                i.args(["-stdclient", "-h2"]);
                i.approximated("fortio's HTTP/2 goes through Go's standard client (-stdclient), not its fast one");
            }
            Protocol::Grpc => {
                return Err(PeerError::Unsupported(
                    "fortio's gRPC mode calls only its own ping service or the health check".into(),
                ))
            }
        }
        i.args(["-c", &connections.to_string(), "-t", &format!("{}ms", load.duration.as_millis())]);
        // The lowest histogram bucket (default 1 ms) bounds what its percentiles can resolve.
        i.args(["-r", "0.00001", "-p", "50,90,95,99", "-json", &load.dir.join(REPORT).display().to_string()]);
        match load.rate {
            Some(rate) => {
                i.args(["-qps", &format!("{rate:.3}")]);
                i.approximated(format!(
                    "fortio spreads -qps {rate:.3} over its {connections} connections and catches up after a stall; \
                     latency counts from each call's actual start"
                ));
            }
            None => {
                i.args(["-qps", "0"]);
            }
        }
        i.args(["-H", &format!("Accept-Encoding: {}", load.accept_encoding())]);
        if load.gzip {
            i.arg("-compression");
        }
        if let Some(body) = &load.call.body {
            i.args(["-payload-file", &load.dir.join(BODY).display().to_string(), "-content-type", load.content_type()]);
            i.files.push((BODY.into(), body.clone()));
        }
        let default_method = if load.call.body.is_some() { "POST" } else { "GET" };
        if load.call.method != default_method {
            i.args(["-X", &load.call.method]);
        }
        if load.tls {
            i.arg("-k");
        }
        if load.new_connection_per_call {
            i.arg("-keepalive=false");
        }
        if load.connections.is_some_and(|c| c != connections) {
            i.approximated(format!("fortio keeps one call in flight per connection: {connections} connections"));
        }
        i.arg(load.url());
        i.outputs.push(REPORT.into());
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let d: serde_json::Value = serde_json::from_str(output.file(REPORT)?).map_err(|e| format!("{REPORT}: {e}"))?;
    let mut claims = Claims {
        seconds: number(&d["ActualDuration"], "ActualDuration")? / 1e9,
        throughput: number(&d["ActualQPS"], "ActualQPS")?,
        ..Claims::default()
    };
    // RetCodes: {"200": n, "-1": socket errors, ...}.
    for (code, n) in d["RetCodes"].as_object().ok_or("no RetCodes in its JSON report")? {
        claims.add_status(code, n.as_u64().unwrap_or(0));
    }
    let h = &d["DurationHistogram"];
    let mut latency = Latency::new();
    latency.insert("max", number(&h["Max"], "DurationHistogram.Max")? * 1e6);
    latency.insert("mean", number(&h["Avg"], "DurationHistogram.Avg")? * 1e6);
    for p in h["Percentiles"].as_array().ok_or("no DurationHistogram.Percentiles")? {
        // Whole percents (fortio writes 50, 99.9...): those callbench records.
        let name = match (number(&p["Percentile"], "Percentile")? * 10.0).round() as u32 {
            500 => "p50",
            900 => "p90",
            950 => "p95",
            990 => "p99",
            _ => continue,
        };
        latency.insert(name, number(&p["Value"], "Percentile value")? * 1e6);
    }
    claims.latency = latency;
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn its_command_asks_for_fine_buckets_and_a_json_report() {
        let i = Fortio.invocation(&testing::auth(Protocol::Http1)).unwrap();
        let line = i.command_line();
        assert!(
            line.starts_with(
                "fortio load -quiet -c 50 -t 10000ms -r 0.00001 -p 50,90,95,99 -json /tmp/run/fortio.json -qps 0"
            ),
            "{line}"
        );
        assert!(line.contains("-X PUT") && line.ends_with("http://127.0.0.1:8080/auth/4242"), "{line}");
        assert!(Fortio.invocation(&testing::load(Protocol::Grpc)).unwrap_err().to_string().contains("ping"));
    }

    #[test]
    fn parses_a_recorded_run() {
        let mut out = Output::default();
        out.files.insert(REPORT.into(), testing::fixture("fortio.json"));
        let c = Fortio.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
    }
}
