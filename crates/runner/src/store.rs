//! The results folder: `results.json` rewritten atomically after every repetition (an interrupted
//! run leaves a valid file), one HdrHistogram interval log per cell, and the reports.

use crate::RunError;
use callbench_results::model::Results;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// Creates `dir` (and `dir/hdr`); refuses a folder that already holds results.
    pub fn create(dir: &Path) -> Result<Store, RunError> {
        if dir.join("results.json").exists() {
            return Err(RunError::Files(format!("{} already holds results; give another --out", dir.display())));
        }
        std::fs::create_dir_all(dir.join("hdr"))
            .map_err(|e| RunError::Files(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Store { dir: dir.to_path_buf() })
    }

    pub fn write_results(&self, results: &Results) -> Result<(), RunError> {
        let text = serde_json::to_string_pretty(results)
            .map_err(|e| RunError::Files(format!("cannot encode results: {e}")))?;
        write_atomic(&self.dir.join("results.json"), text.as_bytes())
    }

    /// Writes the cell's histograms (one per repetition, in order) as an interval log, readable by
    /// HdrHistogram's HistogramLogProcessor; returns its path relative to the folder.
    pub fn write_hdr(&self, cell_id: &str, runs: &[(Histogram<u64>, Duration)]) -> Result<String, RunError> {
        let relative = format!("hdr/{}.hlog", file_safe(cell_id));
        let mut bytes = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        {
            let mut writer = IntervalLogWriterBuilder::new()
                .add_comment(&format!("callbench cell {cell_id}: latency in µs, one interval per repetition"))
                .begin_log_with(&mut bytes, &mut serializer)
                .map_err(|e| RunError::Files(format!("hdr log: {e}")))?;
            let mut start = Duration::ZERO;
            for (h, window) in runs {
                writer
                    .write_histogram(h, start, *window, None)
                    .map_err(|e| RunError::Files(format!("hdr log: {e}")))?;
                start += *window;
            }
        }
        write_atomic(&self.dir.join(&relative), &bytes)?;
        Ok(relative)
    }
}

/// Cell ids have slashes and `=`; file names get `__` and `-`.
pub fn file_safe(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' || c == '+' { c } else { '_' })
        .collect()
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    callbench_atomic_file::write_atomic(path, bytes)
        .map_err(|e| RunError::Files(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn hdr_logs_read_back_with_the_same_counts() {
        let dir = std::env::temp_dir().join(format!("callbench-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::create(&dir).unwrap();
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in [100, 200, 300, 5000] {
            h.record(v).unwrap();
        }
        let path = store.write_hdr("exp/students/rust-actix/connections=1", &[(h.clone(), Duration::from_secs(1))]);
        let path = dir.join(path.unwrap());
        assert!(path.file_name().unwrap().to_str().unwrap().starts_with("exp_students_rust-actix_connections_1"));
        let text = std::fs::read(&path).unwrap();
        let mut read = 0;
        for entry in IntervalLogIterator::new(&text) {
            if let Ok(LogEntry::Interval(i)) = entry {
                let bytes = base64_decode(i.encoded_histogram());
                let back: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                assert_eq!(back.len(), 4);
                assert_eq!(back.max(), h.max());
                read += 1;
            }
        }
        assert_eq!(read, 1);
        assert!(Store::create(&dir).is_ok(), "no results.json yet");
        store.write_results(&sample()).unwrap();
        assert!(Store::create(&dir).unwrap_err().to_string().contains("already holds results"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn base64_decode(text: &str) -> Vec<u8> {
        let table = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let clean: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(table).collect();
        clean
            .chunks(4)
            .flat_map(|q| {
                let n = q.iter().enumerate().fold(0u32, |acc, (i, v)| acc | (u32::from(*v) << (18 - 6 * i)));
                let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
                bytes[..q.len() - 1].to_vec()
            })
            .collect()
    }

    fn sample() -> Results {
        serde_json::from_value(serde_json::json!({
            "schema": "callbench-results/1", "complete": false, "interrupted": false,
            "suite": {"name": "t", "description": "", "file": "", "text": "", "repetitions": 1},
            "environment": {"callbench_version": "0", "git_commit": null, "git_dirty": null, "command_line": [],
              "cpu_model": "", "cores": 1, "kernel": "", "os": "", "client_cpus": [], "server_cpus": [],
              "tools": {}, "started_at": "", "finished_at": null},
            "servers": [], "experiments": [], "cells": [], "comparisons": []
        }))
        .unwrap()
    }
}
