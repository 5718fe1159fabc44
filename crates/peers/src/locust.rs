//! locust, three ways: HttpUser (requests), FastHttpUser (geventhttpclient) and a gRPC user made
//! as locust's documentation shows (locust/locustfile.py). Users loop on the call with no wait, or
//! each at `rate / users` calls/s (constant_throughput). Its final JSON stats are read: response
//! times in whole milliseconds (as locust rounds them), its percentiles computed as locust does.

use crate::claims::{number, Claims, Latency};
use crate::error::PeerError;
use crate::load::{Invocation, Load, Output, Protocol};
use crate::tool::Tool;
use std::collections::BTreeMap;

pub struct Locust {
    name: &'static str,
    class: &'static str,
    grpc: bool,
}

impl Locust {
    pub const HTTP: Locust = Locust { name: "locust", class: "HttpCaller", grpc: false };
    pub const FAST_HTTP: Locust = Locust { name: "locust-fast", class: "FastHttpCaller", grpc: false };
    pub const GRPC: Locust = Locust { name: "locust-grpc", class: "GrpcCaller", grpc: true };
}

const LOCUSTFILE: &str = "callbench_locustfile.py";
/// Its final stats (`--json-file locust` writes locust.json; its CSV files are written
/// periodically and may miss the last seconds).
const REPORT_BASE: &str = "locust";
const REPORT: &str = "locust.json";
const BODY: &str = "callbench-body.json";
const PROTOSET: &str = "callbench.protoset";
const MESSAGE: &str = "callbench-request.bin";

impl Tool for Locust {
    fn name(&self) -> &'static str {
        self.name
    }
    fn program(&self) -> &'static str {
        "locust"
    }
    fn install(&self) -> &'static str {
        "pip install -r crates/peers/locust/requirements.txt (locust 2.47.0) into target/peers/locust/venv"
    }

    fn invocation(&self, load: &Load) -> Result<Invocation, PeerError> {
        match (load.protocol, self.grpc) {
            (Protocol::Http1, false) | (Protocol::Grpc, true) => {}
            (Protocol::Http2, false) => {
                return Err(PeerError::Unsupported("locust's HTTP users speak HTTP/1.1 only".into()))
            }
            (_, false) => {
                return Err(PeerError::Unsupported(format!("{} calls REST; use locust-grpc for gRPC", self.name)))
            }
            (_, true) => return Err(PeerError::Unsupported("locust-grpc calls gRPC only".into())),
        }
        if self.grpc && (load.tls || load.gzip) {
            return Err(PeerError::Unsupported(
                "callbench's locust gRPC user uses a plaintext channel without compression".into(),
            ));
        }
        load.keeps_connections(self.name)?;
        let users = load.concurrency.max(1);
        let dir = |f: &str| load.dir.join(f).display().to_string();
        let mut i = Invocation::new(["locust", "-f", &dir(LOCUSTFILE), "--headless", "--only-summary"]);
        i.args(["-u", &users.to_string(), "-r", &users.to_string()]);
        i.args(["-t", &format!("{}s", load.seconds()), "--stop-timeout", "1"]);
        i.args(["--json-file", &dir(REPORT_BASE), "--loglevel", "WARNING"]);
        let scheme = if load.tls { "https" } else { "http" };
        i.args(["--host", &format!("{scheme}://{}", load.authority)]);
        if load.threads > 1 {
            i.args(["--processes", &load.threads.to_string()]);
        }
        i.arg(self.class);
        i.files.push((LOCUSTFILE.into(), include_bytes!("../locust/locustfile.py").to_vec()));
        i.outputs.push(REPORT.into());
        let mut env = vec![
            ("CALLBENCH_METHOD", load.call.method.clone()),
            ("CALLBENCH_PATH", load.call.path.clone()),
            ("CALLBENCH_ACCEPT_ENCODING", load.accept_encoding().into()),
        ];
        if let Some(body) = &load.call.body {
            i.files.push((BODY.into(), body.clone()));
            env.push(("CALLBENCH_BODY", dir(BODY)));
        }
        if self.grpc {
            i.files.push((PROTOSET.into(), load.call.descriptor_set.clone()));
            i.files.push((MESSAGE.into(), load.call.grpc_message.clone()));
            env.push(("CALLBENCH_PROTOSET", dir(PROTOSET)));
            env.push(("CALLBENCH_GRPC_MESSAGE", dir(MESSAGE)));
            env.push(("CALLBENCH_GRPC_METHOD", load.call.grpc_method.clone()));
        }
        if let Some(rate) = load.rate {
            let per_user = rate / users as f64;
            env.push(("CALLBENCH_RATE", format!("{per_user}")));
            i.approximated(format!(
                "locust paces each of its {users} users at {per_user:.3} calls/s (constant_throughput): a user \
                 waits for its call, so a stall delays the calls after it instead of showing in their latency"
            ));
        }
        i.approximated(format!("locust starts its {users} users over the first second of the run"));
        if load.connections.is_some_and(|c| c != users) {
            i.approximated(format!("locust's users have a connection each: {users} connections"));
        }
        i.env = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Ok(i)
    }

    fn parse(&self, output: &Output) -> Result<Claims, PeerError> {
        read(output).map_err(PeerError::Report)
    }
}

/// Its claims, or what in its report cannot be read.
fn read(output: &Output) -> Result<Claims, String> {
    let d: serde_json::Value = serde_json::from_str(output.file(REPORT)?).map_err(|e| format!("{REPORT}: {e}"))?;
    // One entry per call name; callbench's users make one kind of call, but sum them all.
    let entries = d.as_array().ok_or(format!("{REPORT} is not a list of entries"))?;
    let (mut requests, mut failures, mut total_ms, mut max_ms) = (0u64, 0u64, 0.0, 0.0f64);
    let (mut start, mut last) = (f64::MAX, 0.0f64);
    let mut times: BTreeMap<u64, u64> = BTreeMap::new();
    for e in entries {
        requests = requests.saturating_add(number(&e["num_requests"], "num_requests")? as u64);
        failures = failures.saturating_add(number(&e["num_failures"], "num_failures")? as u64);
        total_ms += number(&e["total_response_time"], "total_response_time")?;
        max_ms = max_ms.max(number(&e["max_response_time"], "max_response_time")?);
        start = start.min(number(&e["start_time"], "start_time")?);
        last = last.max(number(&e["last_request_timestamp"], "last_request_timestamp")?);
        for (ms, n) in e["response_times"].as_object().ok_or("no response_times")? {
            let ms: u64 = ms.parse().map_err(|_| format!("response time '{ms}' is not whole milliseconds"))?;
            let count = times.entry(ms).or_default();
            *count = count.saturating_add(n.as_u64().unwrap_or(0));
        }
    }
    if requests == 0 {
        return Err("locust counted no calls in its run".into());
    }
    let seconds = (last - start).max(0.0);
    let mut claims = Claims {
        ok: requests - failures.min(requests),
        errors: failures,
        seconds,
        // locust's total rate: its calls over the time from its start to its last call.
        throughput: if seconds > 0.0 { requests as f64 / seconds } else { 0.0 },
        ..Claims::default()
    };
    if failures > 0 {
        claims.error_kinds.insert("failures".into(), failures);
    }
    let mut latency = Latency::new();
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)] {
        latency.insert(name, percentile(&times, requests, q) as f64 * 1e3);
    }
    latency.insert("max", max_ms * 1e3);
    latency.insert("mean", total_ms / requests as f64 * 1e3);
    claims.latency = latency;
    Ok(claims)
}

/// A percentile as locust computes it from its rounded response times (milliseconds → count):
/// the largest time with at most `(1 − q)` of the calls above it.
fn percentile(times: &BTreeMap<u64, u64>, requests: u64, q: f64) -> u64 {
    let within = (requests as f64 * q) as u64;
    let mut above = 0;
    for (&ms, &n) in times.iter().rev() {
        above = u64::saturating_add(above, n);
        if requests - above.min(requests) <= within {
            return ms;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::testing;

    #[test]
    fn each_user_class_takes_its_protocol() {
        let i = Locust::FAST_HTTP.invocation(&testing::auth(Protocol::Http1)).unwrap();
        assert_eq!(
            i.command_line(),
            "locust -f /tmp/run/callbench_locustfile.py --headless --only-summary -u 50 -r 50 -t 10s \
             --stop-timeout 1 --json-file /tmp/run/locust --loglevel WARNING --host http://127.0.0.1:8080 FastHttpCaller"
        );
        assert!(i.env.contains(&("CALLBENCH_METHOD".into(), "PUT".into())));
        let g = Locust::GRPC.invocation(&testing::load(Protocol::Grpc)).unwrap();
        assert!(g.env.iter().any(|(k, v)| k == "CALLBENCH_GRPC_METHOD" && v == "callbench.v1.Students/List"));
        assert!(Locust::HTTP
            .invocation(&testing::load(Protocol::Grpc))
            .unwrap_err()
            .to_string()
            .contains("locust-grpc"));
        assert!(Locust::GRPC.invocation(&testing::load(Protocol::Http1)).is_err());
    }

    #[test]
    fn parses_recorded_runs() {
        for fixture in ["locust.json", "locust-fast.json", "locust-grpc.json"] {
            let mut out = Output::default();
            out.files.insert(REPORT.into(), testing::fixture(fixture));
            let c = Locust::HTTP.parse(&out).unwrap();
            assert!(c.ok > 100 && c.errors == 0 && c.seconds > 0.5 && c.throughput > 50.0, "{fixture}: {c:?}");
            assert!(c.latency["p50"] <= c.latency["p99"] && c.latency["p99"] <= c.latency["max"], "{c:?}");
        }
    }

    #[test]
    fn percentiles_follow_locusts_own_rule() {
        // 100 calls: 90 at 1 ms, 9 at 5 ms, 1 at 40 ms.
        let times = BTreeMap::from([(1, 90), (5, 9), (40, 1)]);
        assert_eq!([0.5, 0.9, 0.95, 0.99, 1.0].map(|q| percentile(&times, 100, q)), [1, 5, 5, 40, 40]);
    }
}
