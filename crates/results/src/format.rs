//! How numbers read in the reports: three significant digits, thousands separators, latencies in
//! µs below a millisecond and in ms above, and intervals that share the median's unit and decimals
//! so `1.23 [1.20 – 1.31] ms` lines up in a table.

use crate::model::{Comparison, Estimate, METRICS};

/// The significant digits every figure is shown with: a benchmark's repetitions rarely support more.
pub const DIGITS: usize = 3;

/// Placeholder for a figure that does not exist (a failed cell, a side that was not measured).
pub const MISSING: &str = "–";

/// `v` with [`DIGITS`] significant digits, never in scientific notation: `0.0123`, `12.3`, `12,346`.
pub fn significant(v: f64) -> String {
    fixed(v, decimals_for(v))
}

/// The decimals that give `v` [`DIGITS`] significant digits (0 for values of 100 and more).
pub fn decimals_for(v: f64) -> usize {
    if !v.is_finite() || v == 0.0 {
        return 0;
    }
    let magnitude = v.abs().log10().floor() as i32;
    (DIGITS as i32 - 1 - magnitude).clamp(0, 9) as usize
}

/// `v` with `decimals` decimals and thousands separators.
pub fn fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    let text = format!("{v:.decimals$}");
    let (sign, digits) = text.strip_prefix('-').map_or(("", text.as_str()), |d| ("-", d));
    let (int, frac) = digits.split_once('.').map_or((digits, None), |(i, f)| (i, Some(f)));
    // "-0" after rounding a tiny negative value is just 0.
    let sign =
        if int.chars().all(|c| c == '0') && frac.is_none_or(|f| f.chars().all(|c| c == '0')) { "" } else { sign };
    let grouped = group_thousands(int);
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// `1234567` → `1,234,567`.
pub fn group_thousands(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// [`significant`] without trailing zeros, for axis ticks: `1`, `2.5`, `0.01`, `10,000`.
pub fn compact(v: f64) -> String {
    let text = significant(v);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A count or a rate: whole numbers as such and from 100 up (`42,180`, `96`), three significant
/// digits below (`12.5`).
pub fn count(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        fixed(v, 0)
    } else {
        significant(v)
    }
}

/// How a metric's values are scaled and labelled for display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DisplayUnit {
    /// Shown value = raw value / divisor.
    pub divisor: f64,
    pub unit: &'static str,
}

/// The unit of one of [`METRICS`] (`µs`, `calls/s`...; empty for plain counts).
pub fn metric_unit(metric: &str) -> &'static str {
    METRICS.iter().find(|(name, _, _)| *name == metric).map_or("", |(_, unit, _)| unit)
}

/// The display unit for values of `metric` around `typical`: latencies switch to ms from 1000 µs.
pub fn display_unit(metric: &str, typical: f64) -> DisplayUnit {
    match metric_unit(metric) {
        "µs" => duration_unit(typical),
        unit => DisplayUnit { divisor: 1.0, unit },
    }
}

/// ns below a microsecond (in-process calls, timed at full clock resolution), µs below a
/// millisecond, ms above.
pub fn duration_unit(typical_us: f64) -> DisplayUnit {
    if typical_us.abs() >= 1000.0 {
        DisplayUnit { divisor: 1000.0, unit: "ms" }
    } else if typical_us != 0.0 && typical_us.abs() < 1.0 {
        DisplayUnit { divisor: 0.001, unit: "ns" }
    } else {
        DisplayUnit { divisor: 1.0, unit: "µs" }
    }
}

/// What a latency percentile of 0 means: the histograms count whole microseconds, so the call
/// took less than one (its time per call at full resolution is `wall_us_per_call`).
pub const BELOW_HISTOGRAM: &str = "under 1 µs";

/// A latency in µs as `560 ns`, `812 µs` or `1.23 ms` (`under 1 µs` for a histogram's 0).
pub fn duration_us(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    if v == 0.0 {
        return BELOW_HISTOGRAM.into();
    }
    let u = duration_unit(v);
    format!("{} {}", significant(v / u.divisor), u.unit)
}

/// An axis tick of a duration in µs, without trailing zeros: `500 ns`, `50 µs`, `2.5 ms`.
pub fn duration_tick(us: f64) -> String {
    let u = duration_unit(us);
    format!("{} {}", compact(us / u.divisor), u.unit)
}

/// One value of `metric` without its unit when the unit is fixed (the column header carries it),
/// with it for latencies (whose unit changes with the size).
pub fn value(metric: &str, v: f64) -> String {
    match metric_unit(metric) {
        "µs" => duration_us(v),
        "calls/s" | "KiB" | "B/call" | "" => count(v),
        _ => significant(v),
    }
}

/// One value of `metric` with its unit: `42,180 calls/s`, `812 µs`, `0.97 cores`.
pub fn value_with_unit(metric: &str, v: f64) -> String {
    let shown = value(metric, v);
    match metric_unit(metric) {
        "µs" | "" => shown,
        unit => format!("{shown} {unit}"),
    }
}

/// A median and its interval in one unit: `1.23 [1.20 – 1.31] ms`, `42,180 [41,900 – 42,650] calls/s`.
/// Exact counts (bytes per call, connections) have no interval: they are what was counted.
pub fn estimate(metric: &str, e: &Estimate) -> String {
    if crate::model::is_exact_count(metric) {
        return value_with_unit(metric, e.median);
    }
    // A latency percentile of 0 is under the histograms' resolution, never "0 µs" (the wall
    // time per call is timed at full resolution: its 0 is a 0).
    let latency = metric_unit(metric) == "µs" && metric.starts_with("latency_");
    if latency && e.median == 0.0 {
        return BELOW_HISTOGRAM.into();
    }
    let u = display_unit(metric, e.median);
    let (m, lo, hi) = (e.median / u.divisor, e.lo / u.divisor, e.hi / u.divisor);
    let decimals =
        if matches!(u.unit, "calls/s" | "KiB" | "B/call" | "") && m.abs() >= 100.0 { 0 } else { decimals_for(m) };
    let bound = |v: f64| if latency && v == 0.0 { "<1".to_string() } else { fixed(v, decimals) };
    let body = format!("{} [{} – {}]", fixed(m, decimals), bound(lo), bound(hi));
    if u.unit.is_empty() {
        body
    } else {
        format!("{body} {}", u.unit)
    }
}

/// A ratio: two decimals below 10 (`0.62×`), three significant digits above (`12.4×`, `310×`).
pub fn ratio_value(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    // Two significant digits are enough for small ratios (0.012×), two decimals for the usual ones.
    let decimals = if v.abs() < 10.0 { decimals_for(v).saturating_sub(1).max(2) } else { decimals_for(v) };
    format!("{}×", fixed(v, decimals))
}

/// A ratio and its interval: `0.62× [0.58 – 0.66]`.
pub fn ratio(e: &Estimate) -> String {
    format!("{} [{} – {}]", ratio_value(e.median), bound(e.lo), bound(e.hi))
}

/// An interval's bound, with more decimals when it would otherwise read as 1: the verdict is read
/// from whether the interval holds 1, so a bound of 0.9996 shows as `0.9996`, never `1.00`.
fn bound(v: f64) -> String {
    let plain = ratio_value(v).trim_end_matches('×').to_string();
    let reads_as_one = |t: &str| t.replace(',', "").parse::<f64>() == Ok(1.0);
    if !v.is_finite() || v == 1.0 || !reads_as_one(&plain) {
        return plain;
    }
    (3..=9).map(|decimals| fixed(v, decimals)).find(|t| !reads_as_one(t)).unwrap_or(plain)
}

/// A swept value as written in tables and chart labels: `10,000`, `0.5`.
pub fn swept(x: f64) -> String {
    if x.fract() == 0.0 {
        fixed(x, 0)
    } else {
        significant(x)
    }
}

/// How a comparison's ratio reads (`ratio` is `c.ratio`, or its inverse when read the other way
/// round, `r` here): a count's plain ratio (`0.92×`); a timing's with its 95% interval (`0.78× [0.69 –
/// 0.96]`); an interval short of 95% with its real coverage, lest it be read as one that is not.
pub fn comparison_figure(c: &Comparison, r: &Estimate) -> String {
    if c.exact {
        ratio_value(r.median)
    } else if c.verdict == crate::analysis::TOO_FEW {
        let coverage = c.coverage.map_or(String::new(), |p| format!(", only a {:.0}% interval", p * 100.0));
        format!("{} (the whole range{coverage})", ratio(r))
    } else {
        ratio(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits_without_scientific_notation() {
        assert_eq!(significant(0.012345), "0.0123");
        assert_eq!(significant(1.0), "1.00");
        assert_eq!(significant(12.345), "12.3");
        assert_eq!(significant(123.45), "123");
        assert_eq!(significant(12345.6), "12,346");
        assert_eq!(significant(-1234.0), "-1,234");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(f64::NAN), MISSING);
    }

    #[test]
    fn compact_tick_labels() {
        assert_eq!(compact(1.0), "1");
        assert_eq!(compact(2.5), "2.5");
        assert_eq!(compact(0.01), "0.01");
        assert_eq!(compact(10000.0), "10,000");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(group_thousands("1"), "1");
        assert_eq!(group_thousands("999"), "999");
        assert_eq!(group_thousands("1000"), "1,000");
        assert_eq!(group_thousands("1234567"), "1,234,567");
        assert_eq!(count(42180.4), "42,180");
        assert_eq!(count(2_000_000.0), "2,000,000");
        assert_eq!(count(12.54), "12.5");
        assert_eq!(fixed(-0.001, 2), "0.00");
    }

    #[test]
    fn latencies_in_us_below_a_millisecond_and_ms_above() {
        assert_eq!(duration_us(45.26), "45.3 µs");
        assert_eq!(duration_us(812.0), "812 µs");
        assert_eq!(duration_us(999.0), "999 µs");
        assert_eq!(duration_us(1234.0), "1.23 ms");
        assert_eq!(duration_us(182_000.0), "182 ms");
        assert_eq!(duration_us(12_345_000.0), "12,345 ms");
        assert_eq!(duration_us(0.85), "850 ns");
        assert_eq!(duration_us(0.0), "under 1 µs", "a histogram's 0 is under its resolution");
        assert_eq!(duration_tick(0.5), "500 ns");
        assert_eq!(duration_tick(50.0), "50 µs");
        assert_eq!(duration_tick(2500.0), "2.5 ms");
    }

    #[test]
    fn values_carry_their_unit_when_asked() {
        assert_eq!(value_with_unit("throughput_per_s", 42180.0), "42,180 calls/s");
        assert_eq!(value_with_unit("latency_p99_us", 2500.0), "2.50 ms");
        assert_eq!(value_with_unit("server_cpu_cores", 0.971), "0.971 cores");
        assert_eq!(value_with_unit("connections_opened", 50.0), "50");
        assert_eq!(value_with_unit("wire_received_per_call", 96.0), "96 B/call");
        assert_eq!(value("wire_sent_per_call", 1234.0), "1,234");
    }

    #[test]
    fn intervals_share_the_median_unit_and_decimals() {
        let e = |median, lo, hi| Estimate { median, lo, hi, n: 5 };
        assert_eq!(estimate("latency_p50_us", &e(1234.0, 1200.0, 1310.0)), "1.23 [1.20 – 1.31] ms");
        assert_eq!(estimate("latency_p50_us", &e(45.2, 44.0, 47.1)), "45.2 [44.0 – 47.1] µs");
        assert_eq!(estimate("throughput_per_s", &e(42180.0, 41900.0, 42650.0)), "42,180 [41,900 – 42,650] calls/s");
        assert_eq!(estimate("client_cpu_us_per_call", &e(12.0, 11.5, 12.5)), "12.0 [11.5 – 12.5] CPU-µs/call");
        assert_eq!(estimate("wall_us_per_call", &e(0.56, 0.53, 0.62)), "560 [530 – 620] ns");
        assert_eq!(estimate("latency_p50_us", &e(0.0, 0.0, 0.0)), "under 1 µs");
        assert_eq!(estimate("latency_p50_us", &e(0.0, 0.0, 1.0)), "under 1 µs", "never 0 µs, interval or not");
        assert_eq!(estimate("latency_p99_us", &e(1.0, 0.0, 2.0)), "1.00 [<1 – 2.00] µs");
        assert_eq!(estimate("wall_us_per_call", &e(185.0, 0.0, 370.0)), "185 [0 – 370] µs", "timed, not a histogram");
        assert_eq!(estimate("wire_received_per_call", &e(96.0, 90.0, 100.0)), "96 B/call", "exact: no interval");
    }

    #[test]
    fn an_interval_bound_never_reads_as_one_unless_it_is() {
        let e = |lo: f64, hi: f64| Estimate { median: 0.97, lo, hi, n: 9 };
        assert_eq!(ratio(&e(0.94, 0.9996)), "0.97× [0.94 – 0.9996]");
        assert_eq!(ratio(&e(1.000_04, 1.2)), "0.97× [1.00004 – 1.20]");
        assert_eq!(ratio(&e(0.94, 1.0)), "0.97× [0.94 – 1.00]", "exactly 1 holds 1");
        assert_eq!(ratio(&e(0.94, 1.004)), "0.97× [0.94 – 1.004]");
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio_value(0.6213), "0.62×");
        assert_eq!(ratio_value(1.0), "1.00×");
        assert_eq!(ratio_value(0.0123), "0.012×");
        assert_eq!(ratio_value(12.44), "12.4×");
        assert_eq!(ratio_value(310.2), "310×");
        assert_eq!(ratio(&Estimate { median: 0.62, lo: 0.58, hi: 0.66, n: 5 }), "0.62× [0.58 – 0.66]");
    }

    #[test]
    fn swept_values() {
        assert_eq!(swept(10000.0), "10,000");
        assert_eq!(swept(0.5), "0.500");
        assert_eq!(display_unit("latency_p50_us", 2000.0), DisplayUnit { divisor: 1000.0, unit: "ms" });
        assert_eq!(display_unit("throughput_per_s", 2000.0).unit, "calls/s");
    }

    fn comparison(verdict: &str, exact: bool, coverage: Option<f64>) -> Comparison {
        Comparison {
            experiment: "e".into(),
            metric: "latency_p50_us".into(),
            a: "a".into(),
            b: "b".into(),
            ratio: Estimate { median: 2.0, lo: 1.8, hi: 2.2, n: 3 },
            verdict: verdict.into(),
            exact,
            coverage,
        }
    }

    #[test]
    fn a_figure_shows_its_interval_its_coverage_when_short_of_95_percent_and_none_for_counts() {
        let c = comparison("a higher", false, Some(0.968));
        assert_eq!(comparison_figure(&c, &c.ratio), "2.00× [1.80 – 2.20]");
        let c = comparison(crate::analysis::TOO_FEW, false, Some(0.9));
        assert_eq!(comparison_figure(&c, &c.ratio), "2.00× [1.80 – 2.20] (the whole range, only a 90% interval)");
        let c = comparison("a higher", true, None);
        assert_eq!(comparison_figure(&c, &c.ratio), "2.00×");
    }
}
