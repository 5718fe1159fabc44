//! The echo workload for payload sweeps: records of mixed field types, returned as sent.

use crate::error::{Result, WorkloadError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum Kind {
    #[default]
    #[serde(rename = "KIND_UNSPECIFIED")]
    Unspecified,
    #[serde(rename = "KIND_SMALL")]
    Small,
    #[serde(rename = "KIND_MEDIUM")]
    Medium,
    #[serde(rename = "KIND_LARGE")]
    Large,
}

impl Kind {
    /// The protobuf enum number.
    pub fn number(self) -> i32 {
        self as i32
    }
    pub fn from_number(n: i32) -> Option<Kind> {
        [Kind::Unspecified, Kind::Small, Kind::Medium, Kind::Large].get(usize::try_from(n).ok()?).copied()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct Location {
    pub city: String,
    pub latitude: f64,
    pub longitude: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct Record {
    pub id: i64,
    pub name: String,
    pub score: f64,
    pub active: bool,
    pub kind: Kind,
    pub location: Option<Location>,
    pub tags: Vec<String>,
    pub samples: Vec<i64>,
}

/// REST body and response of `POST /echo`; `records` is required in REST.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct EchoMessage {
    pub records: Vec<Record>,
}

/// Checks the message and gives it back unchanged.
pub fn echo(message: EchoMessage) -> Result<EchoMessage> {
    for (i, r) in message.records.iter().enumerate() {
        let location_finite = r.location.as_ref().is_none_or(|l| l.latitude.is_finite() && l.longitude.is_finite());
        if !r.score.is_finite() || !location_finite {
            return Err(WorkloadError::invalid(format!("records[{i}]: numbers must be finite")));
        }
    }
    Ok(message)
}

/// A deterministic message of `n` records (about 190 bytes of JSON each).
pub fn payload(n: usize) -> EchoMessage {
    EchoMessage { records: (0..n).map(record).collect() }
}

fn record(i: usize) -> Record {
    let kinds = [Kind::Small, Kind::Medium, Kind::Large];
    Record {
        id: 1_000_000 + i as i64,
        name: format!("record-{i:06}"),
        score: (i as f64) * 0.25 + 0.5,
        active: i.is_multiple_of(2),
        kind: kinds[i % 3],
        location: Some(Location { city: "Springfield".into(), latitude: 39.78, longitude: -89.65 }),
        tags: vec!["alpha".into(), "beta".into()],
        samples: vec![i as i64, 2 * i as i64, 3 * i as i64],
    }
}

/// The number of records whose REST JSON is closest to `bytes` (0 for tiny sizes).
pub fn records_for_json_bytes(bytes: usize) -> usize {
    let json_len = |r: &Record| serde_json::to_vec(r).map(|v| v.len()).unwrap_or(0);
    let mut len = r#"{"records":[]}"#.len();
    let mut n = 0;
    loop {
        let next = len + json_len(&record(n)) + usize::from(n > 0);
        if next.abs_diff(bytes) >= len.abs_diff(bytes) {
            return n;
        }
        len = next;
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_what_it_gets() {
        let m = payload(5);
        assert_eq!(echo(m.clone()).unwrap(), m);
    }

    #[test]
    fn rejects_non_finite_numbers() {
        let mut m = payload(1);
        m.records[0].score = f64::NAN;
        assert!(echo(m).is_err());
    }

    #[test]
    fn sizes_sweep_from_tiny_to_a_megabyte() {
        assert_eq!(records_for_json_bytes(10), 0);
        let n = records_for_json_bytes(1 << 20);
        let len = serde_json::to_vec(&payload(n)).unwrap().len() as f64;
        assert!((len / (1 << 20) as f64 - 1.0).abs() < 0.01, "{len}");
    }

    #[test]
    fn kinds_are_names_in_json() {
        let json = serde_json::to_string(&payload(1)).unwrap();
        assert!(json.contains(r#""kind":"KIND_SMALL""#), "{json}");
        assert!(serde_json::from_str::<EchoMessage>(r#"{"records":[{"kind":"KIND_HUGE"}]}"#).is_err());
        assert_eq!(Kind::from_number(3), Some(Kind::Large));
        assert_eq!(Kind::from_number(4), None);
    }
}
