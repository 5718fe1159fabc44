//! wrk (Debian's wrk 4): HTTP/1.1, closed loop, one call in flight per connection. A Lua script
//! sets the call and, when the run is done, prints wrk's own summary and percentiles as one JSON
//! line (its text report rounds latencies to two decimals of a unit it picks). Without the script
//! (`wrk -t1 -c8 -d2s URL`, as bench/engine.py runs it) its text report is read.

use crate::claims::{micros, number, Claims, Latency};
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

/// Its claims, or what in its report cannot be read: the script's summary line, else wrk's text.
fn read(output: &Output) -> Result<Claims, String> {
    match output.stdout.lines().find(|l| l.starts_with("{\"requests\"")) {
        Some(line) => summary_line(line),
        None => text_report(&output.stdout),
    }
}

/// The JSON line of callbench's script ([`DONE`]).
fn summary_line(line: &str) -> Result<Claims, String> {
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

/// wrk's own text report, when it ran without callbench's script: the same counts, its window to
/// two decimals, and the latency it prints (rounded to two decimals of its unit): the mean and the
/// max, and p50, p90 and p99 when run with `--latency`.
fn text_report(text: &str) -> Result<Claims, String> {
    let lines = || text.lines().map(str::trim);
    let after = |label: &str| lines().find_map(|l| l.strip_prefix(label)).map(str::trim);
    // "32131 requests in 2.01s, 2.30MB read"
    let summary = lines()
        .find(|l| l.contains(" requests in "))
        .ok_or("no summary line from callbench's wrk script, nor wrk's own 'N requests in' line")?;
    let (requests, window) = summary.split_once(" requests in ").unwrap_or_default();
    let requests: u64 = requests.parse().map_err(|_| format!("bad count of requests in '{summary}'"))?;
    let window = window.split(',').next().unwrap_or_default();
    let seconds = micros(window).ok_or(format!("bad duration in '{summary}'"))? / 1e6;
    let mut claims = Claims { seconds, ..Claims::default() };
    // "Socket errors: connect 0, read 0, write 0, timeout 8"; "Non-2xx or 3xx responses: 4765".
    let mut counts = vec![];
    if let Some(socket) = after("Socket errors:") {
        for part in socket.split(", ") {
            let (kind, n) = part.split_once(' ').unwrap_or_default();
            counts.push((kind, n.parse::<u64>().map_err(|_| format!("bad count in 'Socket errors: {socket}'"))?));
        }
    }
    let status = match after("Non-2xx or 3xx responses:") {
        Some(n) => n.parse::<u64>().map_err(|_| format!("bad count in 'Non-2xx or 3xx responses: {n}'"))?,
        None => 0,
    };
    counts.push(("status", status));
    for (kind, n) in counts {
        if n > 0 {
            claims.add_error_kind(kind.into(), n);
        }
        claims.errors = claims.errors.saturating_add(n);
    }
    // Non-2xx/3xx answers are among wrk's requests; socket errors are not.
    claims.ok = requests.saturating_sub(status);
    claims.throughput = match after("Requests/sec:") {
        Some(rate) => rate.parse().map_err(|_| format!("bad rate in 'Requests/sec: {rate}'"))?,
        None => Claims::rate_of(requests, seconds),
    };
    // "Latency   2.43ms    6.04ms  51.62ms   93.40%": mean, stdev, max, within a stdev.
    let mut latency = Latency::new();
    if let Some(stats) = after("Latency ").map(|l| l.split_whitespace().collect::<Vec<_>>()) {
        if let (Some(mean), Some(max)) = (stats.first().and_then(|v| micros(v)), stats.get(2).and_then(|v| micros(v))) {
            latency.insert("mean", mean);
            latency.insert("max", max);
        }
    }
    // With --latency: "Latency Distribution", then "50%  185.00us" for 50, 75, 90 and 99.
    for (name, label) in [("p50", "50%"), ("p90", "90%"), ("p99", "99%")] {
        if let Some(v) = after(label).and_then(micros) {
            latency.insert(name, v);
        }
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

    fn plain(fixture: &str) -> Claims {
        Wrk.parse(&Output { stdout: testing::fixture(fixture), ..Output::default() }).unwrap()
    }

    #[test]
    fn reads_wrks_own_report_of_a_run_without_the_script() {
        // `wrk -t1 -c8 -d2s URL`: "32131 requests in 2.01s", "Latency 2.43ms 6.04ms 51.62ms".
        let c = plain("wrk-plain.txt");
        assert_eq!((c.ok, c.errors, c.seconds, c.throughput), (32131, 0, 2.01, 16005.42));
        assert_eq!(c.latency, Latency::from([("mean", 2430.0), ("max", 51620.0)]));
        assert!(c.error_kinds.is_empty());
        // Non-2xx answers are among its requests, and errors.
        let c = plain("wrk-plain-errors.txt");
        assert_eq!((c.ok, c.errors, c.seconds), (23838 - 4765, 4765, 2.09));
        assert_eq!(c.error_kinds["status"], 4765);
        // Timeouts are not among its requests.
        let c = plain("wrk-plain-timeouts.txt");
        assert_eq!((c.ok, c.errors), (56, 8));
        assert_eq!(c.error_kinds.iter().collect::<Vec<_>>(), [(&"timeout".to_string(), &8)]);
        // With --latency, its percentiles too.
        let c = plain("wrk-plain-latency.txt");
        assert_eq!(
            (c.latency["p50"], c.latency["p90"], c.latency["p99"], c.latency["max"]),
            (185.0, 6130.0, 27770.0, 44030.0)
        );
    }

    #[test]
    fn output_without_a_summary_is_a_report_error() {
        let refused =
            Output { stdout: "unable to connect to 127.0.0.1:9 Connection refused\n".into(), ..Output::default() };
        assert_eq!(
            Wrk.parse(&refused).unwrap_err(),
            PeerError::Report("no summary line from callbench's wrk script, nor wrk's own 'N requests in' line".into())
        );
        let bad = Output { stdout: "  12 requests in 2.01parsecs, 1MB read\n".into(), ..Output::default() };
        assert!(Wrk.parse(&bad).unwrap_err().to_string().starts_with("bad duration in"));
        assert_eq!((micros("185.00us"), micros("1.50m"), micros("3.2kb")), (Some(185.0), Some(90e6), None));
    }
}
