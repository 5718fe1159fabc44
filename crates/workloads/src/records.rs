//! The records workload, for streaming calls: an upload of records answered once with their
//! summary, and a download of `count` records made by the rule the contract states. Records are
//! echo's, valid as echo checks them (a conversation answers each message with `echo::echo`).

use crate::echo::{Kind, Location, Record};
use crate::error::{Result, WorkloadError};
use serde::{Deserialize, Serialize};

/// The most records one download may ask for.
pub const MAX_DOWNLOAD: i64 = 100_000;

/// The answer to an upload (REST JSON: lowerCamelCase, 64-bit integers as numbers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UploadSummary {
    pub count: i64,
    pub active_count: i64,
    pub first_id: i64,
    pub last_id: i64,
    pub sample_count: i64,
}

impl UploadSummary {
    /// Adds one record, refused as echo refuses it.
    pub fn add(&mut self, record: &Record) -> Result<()> {
        check(record).map_err(|e| WorkloadError::invalid(format!("record {}: {e}", self.count)))?;
        if self.count == 0 {
            self.first_id = record.id;
        }
        self.count += 1;
        self.active_count += i64::from(record.active);
        self.last_id = record.id;
        self.sample_count += record.samples.len() as i64;
        Ok(())
    }

    /// The summary of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Record>) -> Result<UploadSummary> {
        let mut summary = UploadSummary::default();
        for record in records {
            summary.add(record)?;
        }
        Ok(summary)
    }
}

/// Whether a record is valid: its numbers finite (its kind is known once it parsed).
fn check(record: &Record) -> std::result::Result<(), String> {
    let location_finite = record.location.as_ref().is_none_or(|l| l.latitude.is_finite() && l.longitude.is_finite());
    if record.score.is_finite() && location_finite {
        Ok(())
    } else {
        Err("numbers must be finite".into())
    }
}

/// Checks a download's `count`: 0..=MAX_DOWNLOAD.
pub fn download_count(count: i64) -> Result<usize> {
    if (0..=MAX_DOWNLOAD).contains(&count) {
        Ok(count as usize)
    } else {
        Err(WorkloadError::invalid(format!("count must be in 0..{MAX_DOWNLOAD}, got {count}")))
    }
}

/// Record `i` (from 0) of a download.
pub fn downloaded(i: usize) -> Record {
    let kinds = [Kind::Small, Kind::Medium, Kind::Large];
    let n = i as i64;
    Record {
        id: n + 1,
        name: format!("record-{i:06}"),
        score: i as f64 / 2.0,
        active: i.is_multiple_of(2),
        kind: kinds[i % 3],
        location: Some(Location { city: "Springfield".into(), latitude: 39.78, longitude: -89.65 }),
        tags: vec!["alpha".into(), "beta".into()],
        samples: vec![n, n + 1, n + 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_and_remembers_the_ends() {
        let records: Vec<Record> = (0..5).map(downloaded).collect();
        let s = UploadSummary::of(&records).unwrap();
        assert_eq!(s, UploadSummary { count: 5, active_count: 3, first_id: 1, last_id: 5, sample_count: 15 });
        assert_eq!(UploadSummary::of(&[]).unwrap(), UploadSummary::default());
        let mut bad = downloaded(0);
        bad.score = f64::INFINITY;
        let err = UploadSummary::of(&[downloaded(1), bad]).unwrap_err();
        assert!(err.to_string().contains("record 1"), "{err}");
    }

    #[test]
    fn downloads_follow_the_contracts_rule() {
        let json = serde_json::to_string(&downloaded(3)).unwrap();
        assert!(json.contains(r#""id":4,"name":"record-000003","score":1.5,"active":false,"kind":"KIND_SMALL""#));
        assert!(json.contains(r#""samples":[3,4,5]"#), "{json}");
        assert_eq!(downloaded(1_000_000).name, "record-1000000");
        assert!(download_count(-1).is_err() && download_count(MAX_DOWNLOAD + 1).is_err());
        assert_eq!(download_count(MAX_DOWNLOAD).unwrap(), 100_000);
    }

    #[test]
    fn summaries_are_camel_case_json() {
        let s = UploadSummary { count: 2, active_count: 1, first_id: 7, last_id: 8, sample_count: 0 };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"count":2,"activeCount":1,"firstId":7,"lastId":8,"sampleCount":0}"#);
    }
}
