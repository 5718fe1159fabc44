//! The small languages of `callbench load`'s flags: durations, rate shapes, latency objectives,
//! headers and targets. Every error is one line naming the bad text.

use crate::error::LoadError;
use callbench_engine::grpc::Pace;
use callbench_engine::{RateShape, Segment};
use std::time::Duration;

/// A flag's duration in the one grammar (`10s`, `500ms`, `250us`, `2m`, `1h`, `1.5s`;
/// `callbench_primitives::duration`); a bare number is seconds, at most 10⁷ s.
pub fn duration(text: &str) -> Result<Duration, LoadError> {
    use callbench_primitives::duration::{parse, Bare};
    parse(text, Bare::Seconds, Duration::from_secs(10_000_000)).map_err(|e| LoadError::Settings(e.to_string()))
}

/// A flag's bytes: the text itself, or the contents of FILE for `@FILE` (as curl's `-d @FILE`).
pub fn bytes(text: &str, flag: &str) -> Result<Vec<u8>, LoadError> {
    match text.strip_prefix('@') {
        Some(file) => std::fs::read(file).map_err(|e| LoadError::Data(format!("cannot read {flag} file {file}: {e}"))),
        None => Ok(text.as_bytes().to_vec()),
    }
}

/// A stream's pacing: `burst` or `ping-pong`.
pub fn pace(text: &str) -> Result<Pace, LoadError> {
    match text.trim() {
        "burst" => Ok(Pace::Burst),
        "ping-pong" | "pingpong" => Ok(Pace::PingPong),
        other => Err(LoadError::Settings(format!("bad stream pace {other:?}: burst or ping-pong"))),
    }
}

/// The flag's spelling of a pace.
pub fn pace_name(pace: Pace) -> &'static str {
    match pace {
        Pace::Burst => "burst",
        Pace::PingPong => "ping-pong",
    }
}

/// A positive rate in calls/s, e.g. `1000` or `2.5k`.
pub fn rate(text: &str) -> Result<f64, LoadError> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1e3),
        None => (t, 1.0),
    };
    let value = number
        .parse::<f64>()
        .map(|v| v * scale)
        .map_err(|_| LoadError::Settings(format!("bad rate {text:?} (calls/s)")))?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(LoadError::Settings(format!("bad rate {text:?}: must be ≥ 0 calls/s")))
    }
}

/// A rate over time: `RATE@DURATION` steps and `FROM..TO@DURATION` ramps, comma-separated, e.g.
/// `0..2000@10s,2000@20s`. The run ends after the last segment.
pub fn rate_shape(text: &str) -> Result<(RateShape, Vec<Segment>), LoadError> {
    let mut segments = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (rates, length) = part.split_once('@').ok_or_else(|| {
            LoadError::Settings(format!("bad rate segment {part:?}: write RATE@DURATION or FROM..TO@DURATION"))
        })?;
        let duration = duration(length)?;
        if duration.is_zero() {
            return Err(LoadError::Settings(format!("rate segment {part:?} has no duration")));
        }
        let (from, to) = match rates.split_once("..") {
            Some((from, to)) => (rate(from)?, rate(to)?),
            None => (rate(rates)?, rate(rates)?),
        };
        segments.push(Segment { duration, from, to });
    }
    if segments.is_empty() {
        return Err(LoadError::Settings("empty rate shape".into()));
    }
    Ok((RateShape::segments(segments.clone()).map_err(|e| LoadError::Settings(e.into()))?, segments))
}

/// A latency objective such as `p99<10ms` or `p99.9<=50ms`: (quantile, limit).
pub fn objective(text: &str) -> Result<(f64, Duration), LoadError> {
    let bad = || LoadError::Settings(format!("bad objective {text:?} (try p99<10ms)"));
    let t = text.trim();
    let (left, right) = t.split_once("<=").or_else(|| t.split_once('<')).ok_or_else(bad)?;
    let percent: f64 = left.trim().strip_prefix('p').ok_or_else(bad)?.parse().map_err(|_| bad())?;
    if !(0.0 < percent && percent <= 100.0) {
        return Err(bad());
    }
    Ok((percent / 100.0, duration(right)?))
}

/// `Name: value` (as curl, hey and ghz take `-H`).
pub fn header(text: &str) -> Result<(String, String), LoadError> {
    let (name, value) =
        text.split_once(':').ok_or_else(|| LoadError::Settings(format!("bad header {text:?}: write 'Name: value'")))?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(LoadError::Settings(format!("bad header name in {text:?}")));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// What `<TARGET>` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetUrl {
    Http {
        tls: bool,
        host: String,
        port: u16,
        path: String,
    },
    Grpc {
        tls: bool,
        host: String,
        port: u16,
        method: Option<String>,
    },
    InProc {
        workload: String,
    },
    /// An echo of raw bytes: `size` out, the same back (`raw://host:port?size=N`, 64 by default).
    Raw {
        host: String,
        port: u16,
        size: usize,
    },
}

/// The most bytes a raw call may send (and so receive): a floor is measured with small calls.
pub const MAX_RAW_SIZE: usize = 1 << 20;

pub fn target(text: &str) -> Result<TargetUrl, LoadError> {
    if let Some(workload) = text.strip_prefix("inproc:") {
        return Ok(TargetUrl::InProc { workload: workload.trim_start_matches("//").to_string() });
    }
    let (scheme, rest) = text.split_once("://").ok_or_else(|| {
        LoadError::Target(format!(
            "bad target {text:?}: expected http://, https://, grpc://, grpcs://, raw:// or inproc:"
        ))
    })?;
    if scheme.eq_ignore_ascii_case("raw") {
        return raw(text, rest);
    }
    let (tls, grpc, default_port) = match scheme.to_ascii_lowercase().as_str() {
        "http" => (false, false, 80),
        "https" => (true, false, 443),
        "grpc" => (false, true, 80),
        "grpcs" => (true, true, 443),
        other => return Err(LoadError::Target(format!("unsupported scheme {other:?} in {text:?}"))),
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a); // no credentials in URLs
    let (host, port) =
        split_host_port(authority, default_port).map_err(|e| LoadError::Target(format!("bad target {text:?}: {e}")))?;
    if grpc {
        let method = path.trim_matches('/');
        let method = (!method.is_empty()).then(|| method.to_string());
        return Ok(TargetUrl::Grpc { tls, host, port, method });
    }
    let path = if path.is_empty() {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Ok(TargetUrl::Http { tls, host, port, path })
}

/// `raw://host:port` with an optional `?size=N` (bytes each way); the port has no default.
fn raw(text: &str, rest: &str) -> Result<TargetUrl, LoadError> {
    let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = authority.trim_end_matches('/');
    if authority.contains('/') {
        return Err(LoadError::Target(format!("bad target {text:?}: a raw:// target has no path")));
    }
    let (host, port) =
        split_host_port(authority, 0).map_err(|e| LoadError::Target(format!("bad target {text:?}: {e}")))?;
    if port == 0 {
        return Err(LoadError::Target(format!("bad target {text:?}: name the echo's port (raw://host:port)")));
    }
    let mut size = 64;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("size", n)) => {
                size = n.parse::<usize>().ok().filter(|n| (1..=MAX_RAW_SIZE).contains(n)).ok_or_else(|| {
                    LoadError::Target(format!("bad target {text:?}: size must be 1..={MAX_RAW_SIZE} bytes"))
                })?
            }
            _ => {
                return Err(LoadError::Target(format!(
                    "bad target {text:?}: unknown parameter {pair:?} (raw:// takes size=N)"
                )))
            }
        }
    }
    Ok(TargetUrl::Raw { host, port, size })
}

fn split_host_port(authority: &str, default_port: u16) -> Result<(String, u16), String> {
    if authority.is_empty() {
        return Err("no host".into());
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("unclosed [ in IPv6 address")?;
        (format!("[{host}]"), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?,
        None => default_port,
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("250us"), Ok(Duration::from_micros(250)));
        for bad in ["", "ten", "5 parsecs", "-1s", "1e400s"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes_objectives_headers() {
        let (shape, segments) = rate_shape("0..1000@1s, 1000@2s").unwrap();
        assert_eq!(segments.len(), 2);
        assert_eq!(shape.calls_before(Duration::from_secs(3)), 2500.0);
        assert!(rate_shape("1000").is_err() && rate_shape("x@1s").is_err() && rate_shape("5@0s").is_err());
        assert_eq!(objective("p99<10ms"), Ok((0.99, Duration::from_millis(10))));
        assert!((objective("p99.9<=2s").unwrap().0 - 0.999).abs() < 1e-12);
        assert!(objective("99<1ms").is_err() && objective("p200<1ms").is_err());
        assert_eq!(header("X-A:  b c "), Ok(("X-A".into(), "b c".into())));
        assert!(header("nocolon").is_err() && header(": v").is_err());
        assert_eq!(rate("2.5k"), Ok(2500.0));
    }

    #[test]
    fn targets() {
        assert_eq!(
            target("http://127.0.0.1:8080/students?x=1"),
            Ok(TargetUrl::Http { tls: false, host: "127.0.0.1".into(), port: 8080, path: "/students?x=1".into() })
        );
        assert_eq!(
            target("https://localhost"),
            Ok(TargetUrl::Http { tls: true, host: "localhost".into(), port: 443, path: "/".into() })
        );
        assert_eq!(
            target("grpc://[::1]:50051/callbench.v1.Life/Step"),
            Ok(TargetUrl::Grpc {
                tls: false,
                host: "[::1]".into(),
                port: 50051,
                method: Some("callbench.v1.Life/Step".into())
            })
        );
        assert_eq!(target("inproc:echo"), Ok(TargetUrl::InProc { workload: "echo".into() }));
        assert_eq!(
            target("raw://127.0.0.1:9000"),
            Ok(TargetUrl::Raw { host: "127.0.0.1".into(), port: 9000, size: 64 })
        );
        assert_eq!(
            target("RAW://[::1]:7/?size=1024"),
            Ok(TargetUrl::Raw { host: "[::1]".into(), port: 7, size: 1024 })
        );
        for bad in [
            "127.0.0.1:80",
            "ftp://x/",
            "http://",
            "http://h:99999/",
            "http://[::1/",
            "raw://127.0.0.1",
            "raw://127.0.0.1:9/echo",
            "raw://127.0.0.1:9?size=0",
            "raw://127.0.0.1:9?size=2000000",
            "raw://127.0.0.1:9?colour=red",
        ] {
            assert!(target(bad).is_err(), "{bad}");
        }
    }
}
