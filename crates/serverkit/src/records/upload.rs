//! `POST /records/upload`: an NDJSON body read as it streams in, one `Record` a line, summed up
//! line by line. Only the line being read is held (at most 4 MiB), never the whole upload.
//!
//! After an invalid line the rest of the body is still read (and dropped), up to the upload limit,
//! so that the 400 leaves the connection usable; an upload or a line over its limit stops the
//! reading at once (413), and the server then closes the connection.

use callbench_workloads::echo::Record;
use callbench_workloads::limits::MAX_BODY_BYTES;
use callbench_workloads::records::UploadSummary;
use callbench_workloads::{ErrorKind, WorkloadError};

/// The longest line, without its `\n`: the contract's body limit (exactly that many pass).
pub const MAX_LINE_BYTES: usize = MAX_BODY_BYTES;
/// The largest upload (after gzip is undone, when it was sent gzipped).
pub const MAX_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// One upload being read.
#[derive(Debug, Default)]
pub struct Upload {
    summary: UploadSummary,
    /// The start of a line whose end has not come yet.
    line: Vec<u8>,
    /// Lines seen, blank ones included (for the error messages, from 1).
    lines: u64,
    received: u64,
    /// The first failure; once set, the rest of the body is only counted.
    failed: Option<WorkloadError>,
    /// Reading has stopped: over a limit.
    stopped: bool,
}

impl Upload {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next chunk of the body. `false`: stop reading and answer [`Upload::finish`]
    /// now, the rest of the body left unread (a limit was passed).
    pub fn push(&mut self, mut chunk: &[u8]) -> bool {
        if self.stopped {
            return false;
        }
        self.received += chunk.len() as u64;
        if self.received > MAX_UPLOAD_BYTES {
            self.stop(too_large(format!("the upload is over {MAX_UPLOAD_BYTES} bytes")));
            return false;
        }
        if self.failed.is_some() {
            return true;
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            let (rest_of_line, after) = (&chunk[..end], &chunk[end + 1..]);
            chunk = after;
            if self.line.len() + rest_of_line.len() > MAX_LINE_BYTES {
                self.stop(self.line_too_long());
                return false;
            }
            let result = if self.line.is_empty() {
                // The whole line is in this chunk: read it where it is.
                self.add_line(rest_of_line)
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(rest_of_line);
                let result = self.add_line(&line);
                line.clear();
                self.line = line; // keeps its capacity for the next long line
                result
            };
            if let Err(error) = result {
                self.failed = Some(error);
                return true;
            }
        }
        if self.line.len() + chunk.len() > MAX_LINE_BYTES {
            self.stop(self.line_too_long());
            return false;
        }
        self.line.extend_from_slice(chunk);
        true
    }

    /// The answer, once the body has ended or [`Upload::push`] said to stop: the summary, or
    /// the first failure (400 for an invalid line, 413 for a limit).
    pub fn finish(mut self) -> Result<UploadSummary, WorkloadError> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        // The last line may have no `\n`.
        let last = std::mem::take(&mut self.line);
        self.add_line(&last)?;
        Ok(self.summary)
    }

    /// Whether reading stopped before the body ended (the connection must then close).
    pub fn stopped_early(&self) -> bool {
        self.stopped
    }

    fn add_line(&mut self, line: &[u8]) -> Result<(), WorkloadError> {
        self.lines += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(()); // a blank line (or the empty end of a body ending in `\n`)
        }
        let record: Record = serde_json::from_slice(line)
            .map_err(|e| WorkloadError::invalid(format!("line {}: not a record: {e}", self.lines)))?;
        self.summary.add(&record).map_err(|e| WorkloadError::invalid(format!("line {}: {}", self.lines, e.message)))
    }

    fn line_too_long(&self) -> WorkloadError {
        too_large(format!("line {} is over {MAX_LINE_BYTES} bytes", self.lines + 1))
    }

    fn stop(&mut self, error: WorkloadError) {
        self.stopped = true;
        // A record already refused is still the answer: it came first.
        self.failed.get_or_insert(error);
    }
}

fn too_large(message: String) -> WorkloadError {
    WorkloadError { kind: ErrorKind::ResourceExhausted, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_workloads::records::downloaded;

    fn ndjson(records: impl IntoIterator<Item = Record>) -> Vec<u8> {
        records.into_iter().flat_map(|r| [serde_json::to_vec(&r).unwrap(), b"\n".to_vec()].concat()).collect()
    }

    /// The upload of `body` cut into chunks of `size` bytes.
    fn upload(body: &[u8], size: usize) -> (Result<UploadSummary, WorkloadError>, bool) {
        let mut upload = Upload::new();
        for chunk in body.chunks(size.max(1)) {
            if !upload.push(chunk) {
                break;
            }
        }
        let early = upload.stopped_early();
        (upload.finish(), early)
    }

    #[test]
    fn sums_up_the_lines_however_the_body_is_cut() {
        let body = ndjson((0..50).map(downloaded));
        let expected = UploadSummary::of(&(0..50).map(downloaded).collect::<Vec<_>>()).unwrap();
        for size in [1, 2, 7, 100, 4096, body.len()] {
            assert_eq!(upload(&body, size), (Ok(expected), false), "chunks of {size}");
        }
    }

    #[test]
    fn the_last_line_may_lack_its_newline_and_blank_lines_are_skipped() {
        let body = b"\n{\"id\": 4, \"active\": true, \"samples\": [1]}\n \r\n\n{\"id\": 9}";
        let summary = upload(body, 3).0.unwrap();
        assert_eq!(summary, UploadSummary { count: 2, active_count: 1, first_id: 4, last_id: 9, sample_count: 1 });
        assert_eq!(upload(b"", 1).0.unwrap(), UploadSummary::default());
        assert_eq!(upload(b"\n\n", 1).0.unwrap(), UploadSummary::default());
    }

    #[test]
    fn an_invalid_line_is_400_and_the_rest_is_still_read() {
        for bad in [&b"{\"kind\": \"KIND_HUGE\"}"[..], b"{\"id\": \"1\"}", b"not json", b"{\"id\": 1", b"[1,"] {
            let mut body = b"{\"id\": 1}\n".to_vec();
            body.extend_from_slice(bad);
            body.extend_from_slice(b"\n{\"id\": 2}\n");
            let (result, early) = upload(&body, 5);
            let error = result.unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidArgument, "{}", String::from_utf8_lossy(bad));
            assert!(error.message.starts_with("line 2:"), "{}", error.message);
            assert!(!early);
        }
    }

    #[test]
    fn a_line_over_4_mib_is_413_at_once() {
        let mut body = b"{\"name\": \"".to_vec();
        body.resize(MAX_LINE_BYTES - 2, b'a');
        body.extend_from_slice(b"\"}");
        assert_eq!(body.len(), MAX_LINE_BYTES);
        assert_eq!(upload(&body, 65536).0.unwrap().count, 1, "exactly 4 MiB passes");
        let mut line = body.clone();
        line.push(b'\n');
        assert_eq!(upload(&line, 65536).0.unwrap().count, 1, "and its newline is not counted");

        let mut over = body.clone();
        over.insert(1, b' ');
        for body in [over.clone(), [&over[..], b"\n"].concat()] {
            let (result, early) = upload(&body, 65536);
            assert_eq!(result.unwrap_err().kind, ErrorKind::ResourceExhausted);
            assert!(early);
        }
    }

    #[test]
    fn an_upload_over_64_mib_is_413_even_after_a_bad_line() {
        let line = ndjson([downloaded(0)]);
        let mut upload = Upload::new();
        assert!(upload.push(b"bad\n"));
        let mut sent = 4u64;
        while upload.push(&line) {
            sent += line.len() as u64;
            assert!(sent <= MAX_UPLOAD_BYTES);
        }
        assert!(sent + line.len() as u64 > MAX_UPLOAD_BYTES);
        assert!(upload.stopped_early());
        // The bad line came first: it is the answer.
        assert_eq!(upload.finish().unwrap_err().kind, ErrorKind::InvalidArgument);

        let mut upload = Upload::new();
        let big = vec![b'\n'; 1 << 20];
        let mut pushes = 0;
        while upload.push(&big) {
            pushes += 1;
        }
        assert_eq!(pushes, 64);
        assert_eq!(upload.finish().unwrap_err().kind, ErrorKind::ResourceExhausted);
    }
}
