//! `GET /records?count=N`: the `count` parameter, and the answer's NDJSON lines made as they are
//! sent, a few records to a chunk, never the whole answer at once.

use callbench_workloads::records::{download_count, downloaded};
use callbench_workloads::WorkloadError;

/// A chunk ends after the record that takes it past this many bytes.
const CHUNK_BYTES: usize = 16 * 1024;

/// The `count` of a query string: required, a decimal integer in 0..=100000 (else 400).
pub fn count_param(query: Option<&str>) -> Result<usize, WorkloadError> {
    let value = query
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("count="))
        .ok_or_else(|| WorkloadError::invalid("the query parameter count is required"))?;
    let digits = value.strip_prefix('-').unwrap_or(value);
    let count = match digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        true => None,
        false => value.parse::<i64>().ok(),
    };
    let count =
        count.ok_or_else(|| WorkloadError::invalid(format!("count must be a decimal integer, got {value:?}")))?;
    download_count(count)
}

/// The answer to a download of `count` records: one record as JSON a line, each ending in `\n`.
#[derive(Debug, Clone)]
pub struct DownloadChunks {
    next: usize,
    count: usize,
}

impl DownloadChunks {
    pub fn new(count: usize) -> Self {
        DownloadChunks { next: 0, count }
    }
}

impl Iterator for DownloadChunks {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.next == self.count {
            return None;
        }
        let mut chunk = Vec::with_capacity(CHUNK_BYTES + 512);
        while self.next < self.count && chunk.len() < CHUNK_BYTES {
            serde_json::to_writer(&mut chunk, &downloaded(self.next)).expect("a record is always JSON");
            chunk.push(b'\n');
            self.next += 1;
        }
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_workloads::echo::Record;

    #[test]
    fn count_is_a_required_decimal_integer_in_range() {
        assert_eq!(count_param(Some("count=3")).unwrap(), 3);
        assert_eq!(count_param(Some("x=1&count=0&count=5")).unwrap(), 0);
        assert_eq!(count_param(Some("count=100000")).unwrap(), 100_000);
        assert_eq!(count_param(Some("count=007")).unwrap(), 7);
        for bad in [None, Some(""), Some("counts=3"), Some("count="), Some("count=-1"), Some("count=100001")] {
            assert!(count_param(bad).is_err(), "{bad:?}");
        }
        for bad in ["count=+3", "count=3.0", "count=1e3", "count=abc", "count=-", "count=99999999999999999999"] {
            assert!(count_param(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn chunks_hold_whole_lines_in_order() {
        for count in [0, 1, 3, 1000] {
            let chunks: Vec<Vec<u8>> = DownloadChunks::new(count).collect();
            assert!(chunks.iter().all(|c| c.ends_with(b"\n") && c.len() < 2 * CHUNK_BYTES));
            let body = chunks.concat();
            let lines: Vec<Record> = body
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect();
            assert_eq!(lines, (0..count).map(downloaded).collect::<Vec<_>>());
            assert_eq!(body.iter().filter(|&&b| b == b'\n').count(), count);
        }
        assert!(DownloadChunks::new(1000).count() > 1, "a long answer comes in several chunks");
    }
}
