//! A streamed REST answer (`application/x-ndjson`): one JSON value a line, every line ending in a
//! newline, line i the stream's message i. The one checker of such answers, for the verifier's
//! vectors and the load engine's answer checks alike.

use crate::rest_json::{message_from_rest, same_message};
use prost_reflect::{DynamicMessage, MessageDescriptor};
use serde_json::Value;
use std::fmt;

/// How a body fails to be the expected stream. Lines count from 1.
#[derive(Debug, Clone)]
pub enum NdjsonError {
    /// The last line does not end in a newline: the stream was cut, or is not NDJSON.
    Unterminated,
    /// Another number of lines (empty ones aside) than the stream has messages.
    LineCount { got: usize, expected: usize },
    /// A line that is not JSON.
    NotJson { line: usize, error: String },
    /// A line of JSON that is not the stream's message type.
    NotMessage { line: usize, message: String, error: String },
    /// A line that is another message than the expected one.
    Differs { line: usize, want: Box<DynamicMessage>, got: Box<DynamicMessage> },
}

impl fmt::Display for NdjsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NdjsonError::Unterminated => write!(f, "the last line does not end in a newline"),
            NdjsonError::LineCount { got, expected } => write!(f, "{got} lines (expected {expected})"),
            NdjsonError::NotJson { line, error } => write!(f, "line {line} is not JSON ({error})"),
            NdjsonError::NotMessage { line, message, error } => write!(f, "line {line} is not a {message}: {error}"),
            NdjsonError::Differs { line, .. } => write!(f, "line {line} is another message than expected"),
        }
    }
}

impl std::error::Error for NdjsonError {}

/// The body's lines without their newlines, empty lines skipped; refused when the last one is
/// not ended.
pub fn lines(body: &[u8]) -> Result<Vec<&[u8]>, NdjsonError> {
    if !body.is_empty() && !body.ends_with(b"\n") {
        return Err(NdjsonError::Unterminated);
    }
    Ok(body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect())
}

/// Checks `body` against the stream `expected` of `output` messages: as many whole lines, each
/// the REST JSON of its expected message (a field at its default counts as absent).
pub fn check(output: &MessageDescriptor, expected: &[DynamicMessage], body: &[u8]) -> Result<(), NdjsonError> {
    let lines = lines(body)?;
    if lines.len() != expected.len() {
        return Err(NdjsonError::LineCount { got: lines.len(), expected: expected.len() });
    }
    for (i, (text, want)) in lines.iter().zip(expected).enumerate() {
        let line = i + 1;
        let value: Value =
            serde_json::from_slice(text).map_err(|e| NdjsonError::NotJson { line, error: e.to_string() })?;
        let got = message_from_rest(output, &value).map_err(|error| NdjsonError::NotMessage {
            line,
            message: output.full_name().to_string(),
            error: error.to_string(),
        })?;
        if !same_message(&got, want) {
            return Err(NdjsonError::Differs { line, want: Box::new(want.clone()), got: Box::new(got) });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor_pool;
    use serde_json::json;

    fn board() -> MessageDescriptor {
        descriptor_pool().get_message_by_name("callbench.v1.Board").unwrap()
    }

    fn expected() -> Vec<DynamicMessage> {
        [json!({"board": [[0, 1]]}), json!({"board": [[2, 3], [4, 5]]})]
            .iter()
            .map(|v| message_from_rest(&board(), v).unwrap())
            .collect()
    }

    fn judged(body: &str) -> Result<(), NdjsonError> {
        check(&board(), &expected(), body.as_bytes())
    }

    #[test]
    fn whole_lines_of_the_expected_messages_pass_and_empty_lines_are_skipped() {
        judged("{\"board\":[[0,1]]}\n{\"board\":[[2,3],[4,5]]}\n").unwrap();
        judged("{\"board\":[[0,1]]}\n\n{\"board\": [[2, 3], [4, 5]]}\n").unwrap();
        assert!(check(&board(), &[], b"").is_ok());
    }

    #[test]
    fn each_way_of_failing_is_its_own_kind_with_its_line() {
        let cut = judged("{\"board\":[[0,1]]}\n{\"board\":[[2,3],[4,5]]}");
        assert!(matches!(cut, Err(NdjsonError::Unterminated)), "{cut:?}");
        let short = judged("{\"board\":[[0,1]]}\n");
        assert!(matches!(short, Err(NdjsonError::LineCount { got: 1, expected: 2 })), "{short:?}");
        let garbled = judged("{\"board\":[[0,1]]}\n{\"board\":\n");
        assert!(matches!(garbled, Err(NdjsonError::NotJson { line: 2, .. })), "{garbled:?}");
        let other = judged("{\"board\":[[0,1]]}\n{\"cells\":1}\n");
        assert!(matches!(other, Err(NdjsonError::NotMessage { line: 2, .. })), "{other:?}");
        let differs = judged("{\"board\":[[0,1]]}\n{\"board\":[[2,3]]}\n").unwrap_err();
        assert!(matches!(differs, NdjsonError::Differs { line: 2, .. }), "{differs:?}");
        assert_eq!(differs.to_string(), "line 2 is another message than expected");
    }
}
