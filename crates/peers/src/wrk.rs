//! wrk (Debian's wrk 4): HTTP/1.1, closed loop, one call in flight per connection. A Lua script
//! sets the call and, when the run is done, prints wrk's own summary and percentiles as one JSON
//! line (its text report rounds latencies to two decimals of a unit it picks).

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;

pub struct Wrk;

const SCRIPT: &str = "callbench-wrk.lua";
const BODY: &str = "callbench-body.json";

impl Tool for Wrk {
    fn name(&self) -> &'static str {
        "wrk"
    }
    fn program(&self) -> &'static str {
        "wrk"
    }
    fn install(&self) -> &'static str {
        "apt-get install wrk (Debian 12: 4.1.0)"
    }
    fn version_args(&self) -> &'static [&'static str] {
        &["-v"]
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        match load.protocol {
            Protocol::Http1 => {}
            Protocol::Http2 => return Err(PeerError::Unsupported("wrk speaks HTTP/1.1 only".into())),
            Protocol::Grpc => return Err(PeerError::Unsupported("wrk has no gRPC".into())),
        }
        load.keeps_connections("wrk")?;
        if load.rate.is_some() {
            return Err(PeerError::Unsupported("wrk 4 has no fixed rate (wrk2's -R is not packaged here)".into()));
        }
        let connections = load.concurrency.max(1);
        let threads = load.threads.clamp(1, connections);
        let mut i = Invocation::new(["wrk"]);
        i.args(["-t", &threads.to_string(), "-c", &connections.to_string()]);
        i.args(["-d", &format!("{}s", load.seconds()), "-s", &load.dir.join(SCRIPT).display().to_string()]);
        i.arg(load.url());
        if load.connections.is_some_and(|c| c != connections) {
            i.approximated(format!("wrk keeps one call in flight per connection: {connections} connections"));
        }
        if load.duration.subsec_millis() != 0 {
            i.approximated(format!("wrk runs whole seconds: {} s", load.seconds()));
        }
        let mut script = format!("wrk.method = \"{}\"\n", load.call.method);
        script += &format!("wrk.headers[\"Accept-Encoding\"] = \"{}\"\n", load.accept_encoding());
        if let Some(body) = &load.call.body {
            let path = load.dir.join(BODY).display().to_string();
            script += &format!("local f = assert(io.open(\"{path}\", \"rb\"))\nwrk.body = f:read(\"*a\")\nf:close()\n");
            script += &format!("wrk.headers[\"Content-Type\"] = \"{}\"\n", load.content_type());
            i.files.push((BODY.into(), body.clone()));
        }
        script += DONE;
        i.files.push((SCRIPT.into(), script.into_bytes()));
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let line = output
        .stdout
        .lines()
        .find(|l| l.starts_with("{\"requests\""))
        .ok_or("no summary line from callbench's wrk script")?;
    let d: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("its summary line: {e}"))?;
    let count = |k: &str| number(&d[k], k).map(|v| v as u64);
    let requests = count("requests")?;
    let mut claims = Claims { seconds: number(&d["duration_us"], "duration_us")? / 1e6, ..Claims::default() };
    for kind in ["connect", "read", "write", "status", "timeout"] {
        let n = count(kind)?;
        if n > 0 {
            claims.error_kinds.insert(kind.into(), n);
        }
        claims.errors = claims.errors.saturating_add(n);
    }
    // Non-2xx/3xx answers are among wrk's requests; socket errors are not.
    claims.ok = requests.saturating_sub(count("status")?);
    claims.throughput = Claims::rate_of(requests, claims.seconds);
    let mut latency = Latency::new();
    for (name, key) in
        [("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("max", "max"), ("mean", "mean")]
    {
        latency.insert(name, number(&d[key], key)?);
    }
    claims.latency = latency;
    Ok(claims)
}

/// wrk calls `done` once at the end with its summary and latency statistics (microseconds).
const DONE: &str = r#"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p95":%d,"p99":%d,"max":%d,"mean":%.3f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(95), latency:percentile(99),
    latency.max, latency.mean))
end
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn its_command_sets_the_call_in_a_script() {
        let l = testing::auth(Protocol::Http1);
        let i = Wrk.invocation(&l).unwrap();
        assert_eq!(
            i.command_line(),
            "wrk -t 1 -c 50 -d 10s -s /tmp/run/callbench-wrk.lua http://127.0.0.1:8080/auth/4242"
        );
        let script = String::from_utf8(i.files.iter().find(|f| f.0 == SCRIPT).unwrap().1.clone()).unwrap();
        assert!(script.contains("wrk.method = \"PUT\"") && script.contains("/tmp/run/callbench-body.json"), "{script}");
        assert!(i.approximations.is_empty());
        assert!(Wrk.invocation(&testing::load(Protocol::Grpc)).is_err());
        let mut fixed = testing::load(Protocol::Http1);
        fixed.rate = Some(100.0);
        assert!(Wrk.invocation(&fixed).unwrap_err().to_string().contains("no fixed rate"));
    }

    #[test]
    fn parses_a_recorded_run() {
        let out = Output { stdout: testing::fixture("wrk.txt"), ..Output::default() };
        let c = Wrk.parse(&out).unwrap();
        assert!(c.ok > 1000 && c.errors == 0 && (c.seconds - 2.0).abs() < 0.1, "{c:?}");
        assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
        assert!(Wrk.parse(&Output::default()).is_err());
    }
}
