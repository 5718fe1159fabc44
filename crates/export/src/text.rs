//! The OpenMetrics text exposition of the points, for node_exporter's textfile collector and the
//! like: gauges as they are; a latency histogram as a classic one (cumulative `le` buckets), since
//! the text format has no native histograms, its bounds those of schema [`TEXT_SCHEMA`].
//!
//! The output also parses as Prometheus's text format 0.0.4 (what textfile collectors read): every
//! family is a gauge or a histogram, whose sample names are the same in both formats, and the
//! `# UNIT` and `# EOF` lines read as comments there.

use crate::native::NativeHistogram;
use crate::point::{Kind, Point, Value};
use std::fmt::Write;

/// 16 buckets per power of two: a bucket 4.4% wide, the quantile error a classic histogram read
/// with `histogram_quantile` has here (the remote write's native histograms are finer).
pub const TEXT_SCHEMA: i32 = 4;

/// The exposition, families in the order their first point comes, ending in `# EOF`.
pub fn render(points: &[Point]) -> String {
    let mut families: Vec<&'static str> = Vec::new();
    for p in points {
        if !families.contains(&p.name) {
            families.push(p.name);
        }
    }
    let mut out = String::new();
    for name in families {
        let members: Vec<&Point> = points.iter().filter(|p| p.name == name).collect();
        let first = members[0];
        let kind = match first.kind {
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {name} {}", escape_help(first.help));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        if !first.unit.is_empty() {
            let _ = writeln!(out, "# UNIT {name} {}", first.unit);
        }
        for p in members {
            let labels = label_text(p, None);
            match &p.value {
                Value::Gauge(v) => {
                    let _ = writeln!(out, "{name}{{{labels}}} {}", number(*v));
                }
                Value::Histogram(h) => histogram(&mut out, p, h),
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

fn histogram(out: &mut String, p: &Point, h: &NativeHistogram) {
    let name = p.name;
    let coarse = h.downscaled(TEXT_SCHEMA.min(h.schema));
    let mut cumulative = coarse.zero_count;
    for (&i, &n) in &coarse.buckets {
        cumulative += n;
        let le = number(coarse.upper_bound(i));
        let _ = writeln!(out, "{name}_bucket{{{}}} {cumulative}", label_text(p, Some(&le)));
    }
    let _ = writeln!(out, "{name}_bucket{{{}}} {}", label_text(p, Some("+Inf")), h.count);
    let labels = label_text(p, None);
    let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count);
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", number(h.sum));
}

/// `a="x",b="y"` (and `le` last when given), values escaped.
fn label_text(p: &Point, le: Option<&str>) -> String {
    let mut parts: Vec<String> = p
        .sorted_labels()
        .into_iter()
        .filter(|(k, _)| *k != "__name__")
        .map(|(k, v)| format!("{k}=\"{}\"", escape_value(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    parts.join(",")
}

fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::{upper_bound, FINEST_SCHEMA};

    #[test]
    fn families_gauges_and_cumulative_buckets() {
        let h = NativeHistogram {
            schema: FINEST_SCHEMA,
            count: 7,
            sum: 0.5,
            zero_count: 1,
            // Two fine buckets inside one schema-4 bucket, one in another.
            buckets: [(-2047, 2), (-2034, 3), (-1000, 1)].into_iter().collect(),
        };
        let labels = vec![("cell".to_string(), "a \"b\"\\c".to_string())];
        let points = [
            Point::gauge("callbench_calls", "Calls.", "", labels.clone(), 7.0),
            Point::histogram("callbench_latency_seconds", "Latency.", "seconds", labels.clone(), h),
            Point::gauge("callbench_calls", "Calls.", "", vec![("cell".into(), "z".into())], 1.0),
        ];
        let text = render(&points);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# HELP callbench_calls Calls.");
        assert_eq!(lines[1], "# TYPE callbench_calls gauge");
        assert_eq!(lines[2], r#"callbench_calls{cell="a \"b\"\\c"} 7"#);
        assert_eq!(lines[3], r#"callbench_calls{cell="z"} 1"#, "a family's points stay together");
        assert_eq!(lines[6], "# UNIT callbench_latency_seconds seconds");
        let le = |i: i32| format!("{}", upper_bound(i, TEXT_SCHEMA));
        assert_eq!(lines[7], format!(r#"callbench_latency_seconds_bucket{{cell="a \"b\"\\c",le="{}"}} 6"#, le(-127)));
        assert_eq!(lines[8], format!(r#"callbench_latency_seconds_bucket{{cell="a \"b\"\\c",le="{}"}} 7"#, le(-62)));
        assert!(lines[9].ends_with(r#"le="+Inf"} 7"#));
        assert!(lines[10].starts_with("callbench_latency_seconds_count{") && lines[10].ends_with(" 7"));
        assert!(lines[11].ends_with(" 0.5"));
        assert_eq!(*lines.last().unwrap(), "# EOF");
    }
}
