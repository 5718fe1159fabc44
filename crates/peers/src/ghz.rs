//! ghz: gRPC, closed loop with `-c` workers over `--connections`, or a rate limit; reads the
//! contract from a descriptor set file and the request as binary protobuf. Its JSON report is read.

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Ghz;

const PROTOSET: &str = "callbench.protoset";
const MESSAGE: &str = "callbench-request.bin";

impl Tool for Ghz {
    fn name(&self) -> &'static str {
        "ghz"
    }
    fn program(&self) -> &'static str {
        "ghz"
    }
    fn install(&self) -> &'static str {
        "go install github.com/bojand/ghz/cmd/ghz@v0.121.0"
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        if load.protocol != Protocol::Grpc {
            return Err(PeerError::Unsupported("ghz speaks gRPC only".into()));
        }
        load.keeps_connections("ghz")?;
        let workers = load.concurrency.max(1);
        let connections = load.connections.unwrap_or(1).clamp(1, workers);
        let mut i = Invocation::new(["ghz", if load.tls { "--skipTLS" } else { "--insecure" }]);
        i.args(["--protoset", &load.dir.join(PROTOSET).display().to_string(), "--call", &load.call.grpc_method]);
        // An empty message (Students/List) is no data to ghz's -B: it refuses the file.
        if load.call.grpc_message.is_empty() {
            i.args(["-d", "{}"]);
        } else {
            i.args(["-B", &load.dir.join(MESSAGE).display().to_string()]);
            i.files.push((MESSAGE.into(), load.call.grpc_message.clone()));
        }
        i.args(["-c", &workers.to_string(), "--connections", &connections.to_string()]);
        i.args(["-z", &format!("{}ms", load.duration.as_millis()), "--duration-stop", "wait"]);
        i.args(["--cpus", &load.threads.max(1).to_string(), "-O", "json"]);
        // gzip on its requests (grpc-encoding: gzip); grpc-go then accepts gzip answers too.
        if load.gzip {
            i.arg("--enable-compression");
        }
        if let Some(rate) = load.rate {
            i.args(["--rps", &format!("{}", rate.round().max(1.0) as u64), "--async"]);
            i.approximated(format!(
                "ghz paces calls at --rps {} (whole calls/s) and times each from its actual start",
                rate.round().max(1.0) as u64
            ));
        }
        i.arg(&load.authority);
        i.files.push((PROTOSET.into(), load.call.descriptor_set.clone()));
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let d: serde_json::Value = serde_json::from_str(&output.stdout).map_err(|e| format!("its JSON report: {e}"))?;
    let count = number(&d["count"], "count")? as u64;
    let mut claims = Claims {
        seconds: number(&d["total"], "total")? / 1e9,
        throughput: number(&d["rps"], "rps")?,
        ..Claims::default()
    };
    let codes = d["statusCodeDistribution"].as_object().ok_or("no statusCodeDistribution")?;
    claims.ok = codes.get("OK").and_then(|n| n.as_u64()).unwrap_or(0);
    claims.errors = count.saturating_sub(claims.ok);
    for (code, n) in codes.iter().filter(|(c, _)| c.as_str() != "OK") {
        claims.error_kinds.insert(code.clone(), n.as_u64().unwrap_or(0));
    }
    let mut latency = Latency::new();
    latency.insert("max", number(&d["slowest"], "slowest")? / 1e3);
    latency.insert("mean", number(&d["average"], "average")? / 1e3);
    for p in d["latencyDistribution"].as_array().into_iter().flatten() {
        let name = match number(&p["percentage"], "percentage")? as u32 {
            50 => "p50",
            90 => "p90",
            95 => "p95",
            99 => "p99",
            _ => continue,
        };
        latency.insert(name, number(&p["latency"], "latency")? / 1e3);
    }
    claims.latency = latency;
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn its_command_names_the_method_and_the_descriptor_set() {
        let mut l = testing::load(Protocol::Grpc);
        l.call.grpc_message = vec![8, 1];
        l.connections = Some(50);
        let i = Ghz.invocation(&l).unwrap();
        assert_eq!(
            i.command_line(),
            "ghz --insecure --protoset /tmp/run/callbench.protoset --call callbench.v1.Students/List \
             -B /tmp/run/callbench-request.bin -c 50 --connections 50 -z 10000ms --duration-stop wait --cpus 1 \
             -O json 127.0.0.1:8080"
        );
        assert_eq!(i.files.iter().find(|f| f.0 == PROTOSET).unwrap().1, [1, 2, 3]);
        l.call.grpc_message.clear();
        assert!(Ghz.invocation(&l).unwrap().command_line().contains(" -d '{}' "), "an empty message is JSON");
        assert!(Ghz.invocation(&testing::load(Protocol::Http1)).is_err());
        l.gzip = true;
        assert!(
            Ghz.invocation(&l).unwrap().command_line().contains(" -O json --enable-compression "),
            "gzip asked for"
        );
    }

    #[test]
    fn parses_a_recorded_run() {
        let out = Output { stdout: testing::fixture("ghz.json"), ..Output::default() };
        let c = Ghz.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 100.0, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
    }
}
