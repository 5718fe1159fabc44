//! The records workload over REST, shared by the Rust REST servers so that they answer alike:
//! the NDJSON upload read line by line as its chunks come (`upload`), and the download's `count`
//! parameter and NDJSON lines (`download`). The workload itself (summaries, the records a download
//! sends, what makes a record valid) is `callbench_workloads::records`.

mod download;
mod upload;

pub use download::{count_param, DownloadChunks};
pub use upload::{Upload, MAX_LINE_BYTES, MAX_UPLOAD_BYTES};

/// The media type of a streamed upload and of a download's answer.
pub const NDJSON: &str = "application/x-ndjson";

/// Whether a `Content-Type` value is `application/x-ndjson` (any case, parameters allowed).
pub fn is_ndjson(content_type: Option<&[u8]>) -> bool {
    let Some(value) = content_type.and_then(|v| std::str::from_utf8(v).ok()) else {
        return false;
    };
    value.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case(NDJSON))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndjson_content_types() {
        for ok in ["application/x-ndjson", "Application/X-NDJSON", "application/x-ndjson; charset=utf-8"] {
            assert!(is_ndjson(Some(ok.as_bytes())), "{ok}");
        }
        for refused in ["application/json", "application/x-ndjsonx", "text/plain", "", "application/ndjson"] {
            assert!(!is_ndjson(Some(refused.as_bytes())), "{refused}");
        }
        assert!(!is_ndjson(None));
        assert!(!is_ndjson(Some(b"\xff")));
    }
}
