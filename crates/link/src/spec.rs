//! What a link does to packets, as the user writes it: `rtt=40ms,bandwidth=20mbit,loss=0.01` on a
//! command line, or `network = { rtt = "40ms", bandwidth = "20mbit" }` in a suite. Both forms go
//! through one parser, so a bad spec gets the same one-line error wherever it is written.

use crate::units;
use crate::LinkError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// One direction of the link: client → server is `up`, server → client is `down`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaneSpec {
    /// One-way delay every packet pays.
    pub delay: Duration,
    /// Each packet's delay is `delay` ± up to this much (uniform), never below zero; packets are
    /// never reordered (a packet leaves no earlier than the one before it).
    pub jitter: Duration,
    /// Bits per second the lane carries (None: no limit); a packet waits its turn in the queue.
    pub bandwidth: Option<u64>,
    /// Packets that may wait for the lane (tail drop beyond it).
    pub queue: QueueLimit,
    /// Probability that a packet is lost (0 ≤ loss < 1), drawn from the link's seeded generator.
    pub loss: f64,
}

pub use crate::units::QueueLimit;

/// A whole link: both directions, the generator's seed and the MTU of its interfaces. Two specs
/// are equal when they do the same to packets, however they were written.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub up: LaneSpec,
    pub down: LaneSpec,
    pub seed: u64,
    pub mtu: u16,
    /// The keys as given (normalised), for [`LinkSpec::with`] and the record.
    pairs: BTreeMap<String, String>,
}

impl PartialEq for LinkSpec {
    fn eq(&self, other: &Self) -> bool {
        (self.up, self.down, self.seed, self.mtu) == (other.up, other.down, other.seed, other.mtu)
    }
}

const KEYS: &[&str] = &[
    "rtt",
    "delay",
    "delay_up",
    "delay_down",
    "jitter",
    "bandwidth",
    "bandwidth_up",
    "bandwidth_down",
    "queue",
    "loss",
    "loss_up",
    "loss_down",
    "seed",
    "mtu",
];

/// Delays above this are a typo, not a network (the longest RTT on Earth is under a second).
const MAX_DELAY: Duration = Duration::from_secs(10);

impl LinkSpec {
    /// A link that adds nothing but its own cost: no delay, no limit, no loss.
    pub fn transparent() -> LinkSpec {
        LinkSpec::from_pairs(Vec::<(String, String)>::new()).expect("the empty spec is valid")
    }

    /// Parses `key=value` pairs separated by commas (or spaces).
    pub fn parse(text: &str) -> Result<LinkSpec, LinkError> {
        let mut pairs = Vec::new();
        for part in text.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                LinkError::Invalid(format!(
                    "bad network spec {part:?}: write key=value (e.g. rtt=40ms,bandwidth=20mbit)"
                ))
            })?;
            pairs.push((key.trim().to_string(), value.trim().to_string()));
        }
        LinkSpec::from_pairs(pairs)
    }

    /// The same spec with `key` set to `value` (a sweep's step).
    pub fn with(&self, key: &str, value: &str) -> Result<LinkSpec, LinkError> {
        let mut pairs = self.pairs.clone();
        // A swept rtt replaces any one-way delays, and the other way round.
        match key {
            "rtt" | "delay" => {
                pairs.retain(|k, _| !k.starts_with("delay") && k != "rtt");
            }
            "delay_up" | "delay_down" => {
                pairs.remove("rtt");
                pairs.remove("delay");
            }
            _ => {}
        }
        pairs.insert(key.to_string(), value.to_string());
        LinkSpec::from_pairs(pairs)
    }

    /// Whether `key` names a setting of a link (for suites' sweeps).
    pub fn is_key(key: &str) -> bool {
        KEYS.contains(&key)
    }

    /// A spec from its settings as `(key, value)` pairs (a suite's table).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<LinkSpec, LinkError> {
        LinkSpec::build(pairs).map_err(LinkError::Invalid)
    }

    fn build<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<LinkSpec, String> {
        let mut map = BTreeMap::new();
        for (key, value) in pairs {
            let (key, value) = (key.into().to_ascii_lowercase(), value.into());
            if !KEYS.contains(&key.as_str()) {
                return Err(format!("unknown network setting '{key}' (known: {})", KEYS.join(", ")));
            }
            if map.insert(key.clone(), value).is_some() {
                return Err(format!("network setting '{key}' is given twice"));
            }
        }
        let get = |key: &str| map.get(key).map(String::as_str);
        if get("rtt").is_some() && (get("delay").is_some() || get("delay_up").is_some() || get("delay_down").is_some())
        {
            return Err("give either rtt or one-way delays (delay, delay_up, delay_down), not both".into());
        }
        let delay = |key: &str| -> Result<Option<Duration>, String> {
            get(key).map(|v| units::duration(key, v, MAX_DELAY)).transpose()
        };
        let half_rtt = delay("rtt")?.map(|rtt| rtt / 2);
        let both = half_rtt.or(delay("delay")?).unwrap_or_default();
        let jitter = delay("jitter")?.unwrap_or_default();
        let bandwidth = |key: &str| get(key).map(|v| units::bandwidth(key, v)).transpose();
        let both_bw = bandwidth("bandwidth")?;
        let loss = |key: &str| get(key).map(|v| units::probability(key, v)).transpose();
        let both_loss = loss("loss")?.unwrap_or(0.0);
        let queue = get("queue").map(units::queue).transpose()?.unwrap_or_default();
        let lane = |suffix: &str| -> Result<LaneSpec, String> {
            Ok(LaneSpec {
                delay: delay(&format!("delay_{suffix}"))?.unwrap_or(both),
                jitter,
                bandwidth: bandwidth(&format!("bandwidth_{suffix}"))?.or(both_bw),
                queue,
                loss: loss(&format!("loss_{suffix}"))?.unwrap_or(both_loss),
            })
        };
        let seed = match get("seed") {
            Some(v) => v.parse().map_err(|_| format!("bad seed {v:?}: a whole number from 0 to 2^64-1"))?,
            None => 1,
        };
        let mtu = match get("mtu") {
            Some(v) => units::mtu(v)?,
            None => 1500,
        };
        let spec = LinkSpec { up: lane("up")?, down: lane("down")?, seed, mtu, pairs: map };
        if let QueueLimit::Bytes(bytes) = spec.up.queue {
            if bytes < spec.mtu as u64 {
                return Err(format!("queue of {bytes} bytes cannot hold one packet of the MTU ({} bytes)", spec.mtu));
            }
        }
        Ok(spec)
    }

    /// Round-trip time the link adds (both one-way delays), jitter aside.
    pub fn rtt(&self) -> Duration {
        self.up.delay + self.down.delay
    }

    /// Whether the link changes anything (delay, limit or loss); a transparent link still costs
    /// the forwarder's own time.
    pub fn is_transparent(&self) -> bool {
        [self.up, self.down]
            .iter()
            .all(|l| l.delay.is_zero() && l.jitter.is_zero() && l.bandwidth.is_none() && l.loss == 0.0)
    }
}

impl fmt::Display for LinkSpec {
    /// The canonical form: every setting given, in a fixed order; `rtt=0` for a transparent link.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.up.delay == self.down.delay {
            parts.push(format!("rtt={}", units::show_duration(self.rtt())));
        } else {
            parts.push(format!("delay_up={}", units::show_duration(self.up.delay)));
            parts.push(format!("delay_down={}", units::show_duration(self.down.delay)));
        }
        if !self.up.jitter.is_zero() {
            parts.push(format!("jitter={}", units::show_duration(self.up.jitter)));
        }
        match (self.up.bandwidth, self.down.bandwidth) {
            (a, b) if a == b => {
                if let Some(bw) = a {
                    parts.push(format!("bandwidth={}", units::show_bandwidth(bw)));
                }
            }
            (a, b) => {
                for (key, bw) in [("bandwidth_up", a), ("bandwidth_down", b)] {
                    if let Some(bw) = bw {
                        parts.push(format!("{key}={}", units::show_bandwidth(bw)));
                    }
                }
            }
        }
        if self.up.bandwidth.is_some() || self.down.bandwidth.is_some() || self.pairs.contains_key("queue") {
            parts.push(format!("queue={}", units::show_queue(self.up.queue)));
        }
        if self.up.loss == self.down.loss {
            if self.up.loss > 0.0 {
                parts.push(format!("loss={}", self.up.loss));
            }
        } else {
            parts.push(format!("loss_up={}", self.up.loss));
            parts.push(format!("loss_down={}", self.down.loss));
        }
        if self.up.loss > 0.0 || self.down.loss > 0.0 || !self.up.jitter.is_zero() {
            parts.push(format!("seed={}", self.seed));
        }
        if self.mtu != 1500 {
            parts.push(format!("mtu={}", self.mtu));
        }
        f.write_str(&parts.join(","))
    }
}

/// A suite's `network = { ... }` table: strings or numbers, read as the command line's values.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl<'de> Deserialize<'de> for LinkSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Table(BTreeMap<String, Scalar>),
        }
        let spec = match Form::deserialize(deserializer)? {
            Form::Text(text) => LinkSpec::parse(&text),
            Form::Table(table) => LinkSpec::from_pairs(table.into_iter().map(|(k, v)| {
                let v = match v {
                    Scalar::Text(s) => s,
                    Scalar::Int(i) => i.to_string(),
                    Scalar::Float(x) => x.to_string(),
                    Scalar::Bool(b) => b.to_string(),
                };
                (k, v)
            })),
        };
        spec.map_err(serde::de::Error::custom)
    }
}

impl Serialize for LinkSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_splits_evenly_and_settings_apply_to_both_lanes() {
        let s = LinkSpec::parse("rtt=40ms,bandwidth=20mbit,loss=0.01").unwrap();
        assert_eq!((s.up.delay, s.down.delay), (Duration::from_millis(20), Duration::from_millis(20)));
        assert_eq!((s.up.bandwidth, s.down.bandwidth), (Some(20_000_000), Some(20_000_000)));
        assert_eq!((s.up.loss, s.down.loss, s.seed, s.mtu), (0.01, 0.01, 1, 1500));
        assert_eq!(s.to_string(), "rtt=40ms,bandwidth=20mbit,queue=1000,loss=0.01,seed=1");
        assert_eq!(LinkSpec::parse(&s.to_string()).unwrap(), s);
    }

    #[test]
    fn directions_can_differ() {
        let s = LinkSpec::parse("delay_up=5ms delay_down=15ms bandwidth_down=100mbit bandwidth_up=10mbit").unwrap();
        assert_eq!((s.up.delay, s.down.delay, s.rtt()), (ms(5), ms(15), ms(20)));
        assert_eq!((s.up.bandwidth, s.down.bandwidth), (Some(10_000_000), Some(100_000_000)));
        assert_eq!(s.to_string(), "delay_up=5ms,delay_down=15ms,bandwidth_up=10mbit,bandwidth_down=100mbit,queue=1000");
    }

    #[test]
    fn an_empty_spec_is_transparent() {
        let s = LinkSpec::transparent();
        assert!(s.is_transparent());
        assert_eq!(s.to_string(), "rtt=0");
        assert!(LinkSpec::parse("rtt=0").unwrap().is_transparent());
        assert!(!LinkSpec::parse("rtt=1ms").unwrap().is_transparent());
    }

    #[test]
    fn with_replaces_one_setting() {
        let s = LinkSpec::parse("rtt=40ms,bandwidth=20mbit").unwrap();
        let t = s.with("rtt", "100ms").unwrap();
        assert_eq!((t.rtt(), t.up.bandwidth), (ms(100), Some(20_000_000)));
        let u = s.with("delay_up", "1ms").unwrap();
        assert_eq!((u.up.delay, u.down.delay), (ms(1), Duration::ZERO));
        assert!(s.with("nonsense", "1").is_err());
    }

    #[test]
    fn bad_specs_are_one_line_errors() {
        for (text, expected) in [
            ("rtt=-1", "must not be negative"),
            ("rtt=-1ms", "must not be negative"),
            ("rtt=40", "unit"),
            ("bandwidth=0", "above zero"),
            ("bandwidth=20mbps", "mbit"),
            ("loss=2", "below 1"),
            ("loss=-0.1", "below 1"),
            ("colour=blue", "unknown network setting 'colour'"),
            ("rtt=1ms,rtt=2ms", "twice"),
            ("rtt=10ms,delay_up=1ms", "either rtt"),
            ("rtt", "key=value"),
            ("rtt=100s", "at most"),
            ("queue=0", "at least 1"),
            ("queue=100B", "cannot hold one packet"),
            ("mtu=70000", "mtu"),
            ("seed=x", "seed"),
        ] {
            let err = LinkSpec::parse(text).unwrap_err();
            assert!(matches!(err, LinkError::Invalid(_)), "{text}: {err:?}");
            let err = err.to_string();
            assert!(err.contains(expected), "{text}: {err}");
            assert!(!err.contains('\n'), "{text}: {err}");
        }
    }

    #[test]
    fn a_suite_table_reads_like_the_command_line() {
        #[derive(Deserialize)]
        struct Experiment {
            network: LinkSpec,
        }
        let e: Experiment =
            toml_like(r#"{"network": {"rtt": "40ms", "bandwidth": "20mbit", "loss": 0.0, "queue": 100}}"#);
        assert_eq!(e.network, LinkSpec::parse("rtt=40ms,bandwidth=20mbit,queue=100").unwrap());
        let e: Experiment = toml_like(r#"{"network": "rtt=10ms"}"#);
        assert_eq!(e.network.rtt(), ms(10));
        let err = serde_json::from_str::<Experiment>(r#"{"network": {"rtt": "-1ms"}}"#).err().unwrap();
        assert!(err.to_string().contains("negative"), "{err}");
    }

    fn toml_like<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }
}
