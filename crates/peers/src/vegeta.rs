//! vegeta: an attack at a constant rate (workers added as needed to hold it) or, with rate 0, as
//! fast as a fixed number of workers can; HTTP/1.1, h2c and h2. `vegeta report -type=json` turns
//! its binary results into the report that is read.

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Vegeta;

const TARGETS: &str = "vegeta-targets.txt";
const BODY: &str = "callbench-body.json";
const RESULTS: &str = "vegeta-results.bin";

impl Tool for Vegeta {
    fn name(&self) -> &'static str {
        "vegeta"
    }
    fn program(&self) -> &'static str {
        "vegeta"
    }
    fn install(&self) -> &'static str {
        "go install github.com/tsenart/vegeta/v12@v12.12.0"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["-version"]
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        let mut i = Invocation::new(["vegeta", "attack"]);
        match load.protocol {
            Protocol::Http1 => {
                i.arg("-http2=false");
            }
            Protocol::Http2 if !load.tls => {
                i.arg("-h2c");
            }
            Protocol::Http2 => {}
            Protocol::Grpc => return Err(PeerError::Unsupported("vegeta has no gRPC".into())),
        }
        let workers = load.concurrency.max(1).to_string();
        i.args(["-duration", &format!("{}ms", load.duration.as_millis())]);
        match load.rate {
            Some(rate) => {
                i.args(["-rate", &format!("{}/1s", rate.round().max(1.0) as u64)]);
                if rate.fract() != 0.0 {
                    i.approximated(format!("vegeta's rate is whole calls/s: {}/1s", rate.round().max(1.0)));
                }
            }
            // Rate 0: as fast as the workers go, each waiting for its answer (closed loop).
            None => {
                i.args(["-rate", "0", "-workers", &workers, "-max-workers", &workers]);
            }
        }
        if let Some(connections) = load.connections {
            i.args(["-max-connections", &connections.to_string()]);
        }
        if load.tls {
            i.arg("-insecure");
        }
        if load.new_connection_per_call {
            i.arg("-keepalive=false");
        }
        i.args(["-targets", &load.dir.join(TARGETS).display().to_string()]);
        i.args(["-output", &load.dir.join(RESULTS).display().to_string()]);
        let mut targets = format!("{} {}\nAccept-Encoding: {}\n", load.call.method, load.url(), load.accept_encoding());
        if let Some(body) = &load.call.body {
            targets += &format!("Content-Type: {}\n@{}\n", load.content_type(), load.dir.join(BODY).display());
            i.files.push((BODY.into(), body.clone()));
        }
        i.files.push((TARGETS.into(), targets.into_bytes()));
        i.report = Some(
            ["vegeta", "report", "-type=json", &load.dir.join(RESULTS).display().to_string()]
                .map(String::from)
                .to_vec(),
        );
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let d: serde_json::Value = serde_json::from_str(&output.stdout).map_err(|e| format!("its JSON report: {e}"))?;
    let requests = number(&d["requests"], "requests")? as u64;
    let mut claims = Claims {
        // The attack's duration plus the wait for the last answers: the window of its throughput.
        seconds: (number(&d["duration"], "duration")? + number(&d["wait"], "wait")?) / 1e9,
        throughput: number(&d["throughput"], "throughput")?,
        ..Claims::default()
    };
    for (code, n) in d["status_codes"].as_object().into_iter().flatten() {
        claims.add_status(code, n.as_u64().unwrap_or(0));
    }
    claims.errors = requests.saturating_sub(claims.ok);
    let l = &d["latencies"];
    let mut latency = Latency::new();
    for (name, key) in
        [("p50", "50th"), ("p90", "90th"), ("p95", "95th"), ("p99", "99th"), ("max", "max"), ("mean", "mean")]
    {
        latency.insert(name, number(&l[key], key)? / 1e3);
    }
    claims.latency = latency;
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn closed_loop_is_rate_zero_with_fixed_workers() {
        let i = Vegeta.invocation(&testing::auth(Protocol::Http2)).unwrap();
        assert_eq!(
            i.command_line(),
            "vegeta attack -h2c -duration 10000ms -rate 0 -workers 50 -max-workers 50 \
             -targets /tmp/run/vegeta-targets.txt -output /tmp/run/vegeta-results.bin"
        );
        let targets = String::from_utf8(i.files.iter().find(|f| f.0 == TARGETS).unwrap().1.clone()).unwrap();
        assert_eq!(
            targets,
            "PUT http://127.0.0.1:8080/auth/4242\nAccept-Encoding: identity\nContent-Type: application/json\n\
             @/tmp/run/callbench-body.json\n"
        );
        assert_eq!(i.report.unwrap()[..3], ["vegeta", "report", "-type=json"]);
    }

    #[test]
    fn parses_a_recorded_run() {
        let out = Output { stdout: testing::fixture("vegeta.json"), ..Output::default() };
        let c = Vegeta.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
    }
}
