//! The report of a client that prints one JSON line per call, `{"us": 1234.5, "ok": true}` (or
//! `"ok": false, "error": "…"`), as the seed articles' clients in `clients/` do. Lines without
//! `us` (a closing summary) are not calls.

use crate::claims::{quantile, Claims, Latency};
use crate::error::PeerError;
use serde_json::Value;

/// Its claims: every call's time, the window the sum of their times (the calls are sequential).
pub fn parse(stdout: &str, stderr: &str) -> Result<Claims, PeerError> {
    read(stdout, stderr).map_err(PeerError::Report)
}

fn read(stdout: &str, stderr: &str) -> Result<Claims, String> {
    let mut times = vec![];
    let mut claims = Claims::default();
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not a JSON line ({e}): {line:.120}"))?;
        let Some(us) = v.get("us") else { continue };
        let us = us.as_f64().filter(|us| *us >= 0.0).ok_or(format!("'us' is not a time: {line:.120}"))?;
        times.push(us);
        if v.get("ok") == Some(&Value::Bool(true)) {
            claims.ok += 1;
        } else {
            claims.errors += 1;
            let kind = v.get("error").and_then(Value::as_str).unwrap_or("failed");
            *claims.error_kinds.entry(kind.chars().take(80).collect()).or_default() += 1;
        }
    }
    if times.is_empty() {
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("nothing on stderr");
        return Err(format!("it printed no calls ({})", last.trim()));
    }
    claims.seconds = times.iter().sum::<f64>() / 1e6;
    claims.throughput = Claims::rate_of(claims.ok, claims.seconds);
    claims.latency = latency(&mut times);
    Ok(claims)
}

fn latency(times: &mut [f64]) -> Latency {
    times.sort_by(f64::total_cmp);
    let mut latency = Latency::new();
    latency.insert("mean", times.iter().sum::<f64>() / times.len() as f64);
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)] {
        if let Some(v) = quantile(times, q) {
            latency.insert(name, v);
        }
    }
    latency
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_line_counts_and_a_summary_line_does_not() {
        let out = "{\"us\": 3000, \"ok\": true}\n{\"us\": 1000.5, \"ok\": true}\n\
                   {\"us\": 2000, \"ok\": false, \"error\": \"connect: refused\"}\n\
                   {\"jvm_to_first_call_ms\": 900, \"calls\": 3, \"failed\": 1}\n";
        let c = parse(out, "").unwrap();
        assert_eq!((c.ok, c.errors), (2, 1));
        assert_eq!(c.error_kinds["connect: refused"], 1);
        assert!((c.seconds - 0.0060005).abs() < 1e-9, "{}", c.seconds);
        assert_eq!((c.latency["p50"], c.latency["max"]), (2000.0, 3000.0));
    }

    #[test]
    fn no_calls_or_a_line_that_is_not_json_is_an_error_that_says_why() {
        assert_eq!(
            parse("", "seed000-rest: connect ECONNREFUSED\n").unwrap_err(),
            PeerError::Report("it printed no calls (seed000-rest: connect ECONNREFUSED)".into())
        );
        assert!(parse("Exception in thread main\n", "").unwrap_err().to_string().starts_with("not a JSON line"));
        assert!(parse("{\"us\": -1, \"ok\": true}\n", "").unwrap_err().to_string().contains("'us' is not a time"));
    }
}
