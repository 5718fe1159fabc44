//! The values of a link spec: durations, bandwidths (bits per second, as tc writes them),
//! probabilities, queue sizes and MTUs — each checked, each error one line naming the setting.

use std::time::Duration;

/// How much may wait for a bandwidth-limited lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl Default for QueueLimit {
    /// 1000 packets: a Linux interface's default transmit queue (and netem's default limit).
    fn default() -> Self {
        QueueLimit::Packets(1000)
    }
}

/// A delay or jitter in the one grammar (`40ms`, `1.5ms`, `250us`, `0.2s`, or `0`), with its
/// unit, at most `max`; the error names the setting.
pub(crate) fn duration(key: &str, text: &str, max: Duration) -> Result<Duration, String> {
    use callbench_primitives::duration::{parse, Bare};
    parse(text, Bare::OnlyZero, max).map_err(|e| format!("{key}: {e}"))
}

/// Bits per second: `20mbit`, `500kbit`, `1gbit`, `64000bit` (k, m, g are powers of 1000).
pub(crate) fn bandwidth(key: &str, text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let hint = || format!("bad {key} {text:?}: bits per second as 20mbit, 500kbit or 1gbit");
    if t.ends_with("bps") || t.ends_with("b/s") {
        return Err(format!("{} (write mbit for megabits per second; bps is ambiguous)", hint()));
    }
    if t.parse::<f64>().is_ok_and(|v| v <= 0.0) {
        return Err(format!("{key} must be above zero (got {text:?}); leave it out for no limit"));
    }
    let (number, scale) = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)]
        .iter()
        .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n.to_string(), *scale)))
        .ok_or_else(hint)?;
    let value: f64 = number.trim().parse().map_err(|_| hint())?;
    if !value.is_finite() || value <= 0.0 {
        return Err(format!("{key} must be above zero (got {text:?}); leave it out for no limit"));
    }
    let bits = value * scale;
    if !(1000.0..=1e12).contains(&bits) {
        return Err(format!("{key}={text} is out of range: from 1kbit to 1000gbit"));
    }
    Ok(bits.round() as u64)
}

/// `0.01` or `1%`: at least 0 and below 1.
pub(crate) fn probability(key: &str, text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(n) => n.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("bad {key} {text:?}: a probability such as 0.01 or 1%"))?;
    if !(0.0..1.0).contains(&value) {
        return Err(format!("{key} must be at least 0 and below 1 (got {text:?})"));
    }
    Ok(value)
}

/// `1000` (packets) or `64kB`, `1MB`, `256KiB`, `30000B` (bytes).
pub(crate) fn queue(text: &str) -> Result<QueueLimit, String> {
    let t = text.trim();
    let hint = || format!("bad queue {text:?}: packets (1000) or bytes (64kB, 256KiB, 1MB)");
    if let Ok(packets) = t.parse::<u64>() {
        if packets == 0 || packets > 1_000_000 {
            return Err(format!("queue must be at least 1 packet and at most 1000000 (got {text:?})"));
        }
        return Ok(QueueLimit::Packets(packets as u32));
    }
    match bytes(t) {
        Some(b) if b > 0.0 && b <= 1e10 => Ok(QueueLimit::Bytes(b.round() as u64)),
        _ => Err(hint()),
    }
}

/// A size in bytes, `256MiB`, `64kB`, `1GB` or `30000B`, from `min` to `max` bytes; the error names `key`.
pub(crate) fn size(key: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    let hint = || format!("bad {key} {text:?}: bytes as 256MiB, 64kB, 1GB or 30000B");
    let b = bytes(text.trim()).filter(|b| *b > 0.0).ok_or_else(hint)?.round();
    if b < min as f64 || b > max as f64 {
        return Err(format!("{key}={text} is out of range: from {} to {}", show_size(min), show_size(max)));
    }
    Ok(b as u64)
}

/// The bytes a number with a unit of bytes means (k, M, G are powers of 1000; Ki, Mi, Gi of 1024).
fn bytes(t: &str) -> Option<f64> {
    const UNITS: [(&str, f64); 8] = [
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
        ("kB", 1e3),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("B", 1.0),
    ];
    let (number, scale) = UNITS.iter().find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n, *scale)))?;
    let value: f64 = number.trim().parse().ok()?;
    value.is_finite().then_some(value * scale)
}

/// 576 to 9000 bytes.
pub(crate) fn mtu(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(m) if (576..=9000).contains(&m) => Ok(m),
        _ => Err(format!("bad mtu {text:?}: 576 to 9000 bytes")),
    }
}

pub fn show_duration(d: Duration) -> String {
    callbench_primitives::duration::show(d)
}

pub fn show_bandwidth(bits: u64) -> String {
    let b = bits as f64;
    if b >= 1e9 && (b / 1e9).fract() == 0.0 || b >= 1e10 {
        format!("{}gbit", trim(b / 1e9))
    } else if b >= 1e6 {
        format!("{}mbit", trim(b / 1e6))
    } else if b >= 1e3 {
        format!("{}kbit", trim(b / 1e3))
    } else {
        format!("{bits}bit")
    }
}

pub fn show_queue(q: QueueLimit) -> String {
    match q {
        QueueLimit::Packets(p) => p.to_string(),
        QueueLimit::Bytes(b) => format!("{b}B"),
    }
}

/// `256MiB`, `64kB`, `1000B`: the largest unit that shows `bytes` exactly.
pub fn show_size(bytes: u64) -> String {
    let units =
        [(1 << 30, "GiB"), (1_000_000_000, "GB"), (1 << 20, "MiB"), (1_000_000, "MB"), (1 << 10, "KiB"), (1000, "kB")];
    match units.iter().find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit)) {
        Some((unit, name)) => format!("{}{name}", bytes / unit),
        None => format!("{bytes}B"),
    }
}

/// A number without trailing zeros (up to 3 decimals).
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let max = Duration::from_secs(10);
        assert_eq!(duration("rtt", "40ms", max), Ok(Duration::from_millis(40)));
        assert_eq!(duration("rtt", "1.5ms", max), Ok(Duration::from_micros(1500)));
        assert_eq!(duration("rtt", "250us", max), Ok(Duration::from_micros(250)));
        assert_eq!(duration("rtt", "0", max), Ok(Duration::ZERO));
        assert_eq!(duration("rtt", "0.1s", max), Ok(Duration::from_millis(100)));
        // Past Duration's own range: too long, not a panic (fuzz/suite_toml found it).
        assert!(duration("rtt", "333333333333333333333333333330ms", max).unwrap_err().contains("too long"));
        assert_eq!(show_duration(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(show_duration(Duration::from_micros(250)), "250us");
        assert_eq!(show_duration(Duration::from_secs(2)), "2s");
    }

    #[test]
    fn bandwidths_are_bits_per_second() {
        assert_eq!(bandwidth("b", "20mbit"), Ok(20_000_000));
        assert_eq!(bandwidth("b", "1.5Mbit"), Ok(1_500_000));
        assert_eq!(bandwidth("b", "1gbit"), Ok(1_000_000_000));
        assert_eq!(bandwidth("b", "64000bit"), Ok(64_000));
        assert!(bandwidth("b", "10").is_err());
        assert!(bandwidth("b", "100bit").is_err());
        for bits in [20_000_000, 1_500_000, 1_000_000_000, 64_000, 2_500_000_000] {
            assert_eq!(bandwidth("b", &show_bandwidth(bits)), Ok(bits), "{}", show_bandwidth(bits));
        }
    }

    #[test]
    fn probabilities_and_queues() {
        assert_eq!(probability("loss", "1%"), Ok(0.01));
        assert_eq!(probability("loss", "0"), Ok(0.0));
        assert!(probability("loss", "1").is_err());
        assert_eq!(queue("100"), Ok(QueueLimit::Packets(100)));
        assert_eq!(queue("64kB"), Ok(QueueLimit::Bytes(64_000)));
        assert_eq!(queue("256KiB"), Ok(QueueLimit::Bytes(262_144)));
        assert!(queue("lots").is_err());
        assert_eq!(mtu("1500"), Ok(1500));
    }

    #[test]
    fn sizes_are_bytes_within_their_range() {
        let max = 1 << 40;
        assert_eq!(size("cap", "256MiB", 1024, max), Ok(256 << 20));
        assert_eq!(size("cap", "64kB", 1024, max), Ok(64_000));
        assert_eq!(size("cap", "1.5GB", 1024, max), Ok(1_500_000_000));
        assert_eq!(size("cap", "30000B", 1024, max), Ok(30_000));
        assert!(size("cap", "30000", 1024, max).unwrap_err().contains("bytes as 256MiB"), "a unit is needed");
        assert!(size("cap", "-1MB", 1024, max).is_err());
        assert!(size("cap", "100B", 1024, max).unwrap_err().contains("from 1KiB to 1024GiB"));
        for bytes in [256 << 20, 64_000, 1_500_000_000, 30_000, 1023, 5 << 30, 8 << 10] {
            assert_eq!(size("cap", &show_size(bytes), 1, max), Ok(bytes), "{}", show_size(bytes));
        }
    }
}
