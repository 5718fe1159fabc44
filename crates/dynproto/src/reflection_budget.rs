//! What one reflection resolution may take from a server, counted on the wire before anything is
//! decoded: its answers' bytes together, the file descriptors they carry, and the protobuf fields
//! in those files. Each bound matters on its own: a 2-byte empty file or field decodes into a
//! struct of up to a few hundred bytes, so a few MiB of them would be gigabytes.

/// All answers of one resolution together (the largest descriptor sets served are a few MiB).
pub(crate) const MAX_BYTES: usize = 16 << 20;
/// A server with more files than this is sending us in circles.
pub(crate) const MAX_FILES: usize = 10_000;
/// Fields at every depth of every file (a length-delimited field that reads as a message counts
/// its own fields too): a decoded field costs up to a few hundred bytes.
pub(crate) const MAX_FIELDS: usize = 500_000;
/// prost refuses messages nested deeper, so nothing deeper is decoded.
const MAX_DEPTH: usize = 100;

/// `ServerReflectionResponse.file_descriptor_response` and its `file_descriptor_proto`.
const FILE_DESCRIPTOR_RESPONSE: u64 = 4;
const FILE_DESCRIPTOR_PROTO: u64 = 1;

/// What is left of one resolution's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub bytes: usize,
    pub files: usize,
    pub fields: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { bytes: MAX_BYTES, files: MAX_FILES, fields: MAX_FIELDS }
    }
}

/// Why an answer does not fit: the bound it passes, as one line.
pub(crate) fn past_bytes() -> String {
    format!("the server's answers pass {} MiB, the most one resolution reads", MAX_BYTES >> 20)
}

impl Budget {
    /// Takes one answer's share (its bytes, its files and their fields), walking its wire tags
    /// only; Err names the bound it passes. An answer that is no protobuf message takes its bytes
    /// only: decoding it fails next.
    pub(crate) fn take(&mut self, answer: &[u8]) -> Result<(), String> {
        self.bytes = self.bytes.checked_sub(answer.len()).ok_or_else(past_bytes)?;
        let mut files = 0usize;
        let mut fields = 0usize;
        let mut count = |number: u64, content: Option<&[u8]>| -> Result<(), Over> {
            fields += 1;
            let Some(content) = content else { return Ok(()) };
            if number != FILE_DESCRIPTOR_RESPONSE {
                return count_fields(content, 1, &mut fields, self.fields).map(drop);
            }
            let files_in = |number: u64, file: Option<&[u8]>| -> Result<(), Over> {
                fields += 1;
                if let (FILE_DESCRIPTOR_PROTO, Some(file)) = (number, file) {
                    files += 1;
                    if files > self.files {
                        return Err(Over::Files);
                    }
                    count_fields(file, 2, &mut fields, self.fields)?;
                }
                over_fields(fields, self.fields)
            };
            match walk(content, files_in) {
                Err(Walk::Over(over)) => Err(over),
                Ok(()) | Err(Walk::Malformed) => Ok(()), // decoding it fails next
            }
        };
        match walk(answer, &mut count) {
            Err(Walk::Over(Over::Files)) => Err(format!("the server sent over {MAX_FILES} files")),
            Err(Walk::Over(Over::Fields)) => {
                Err(format!("the server's files hold over {MAX_FIELDS} protobuf fields, the most one resolution reads"))
            }
            Ok(()) | Err(Walk::Malformed) => {
                self.files -= files.min(self.files);
                self.fields -= fields.min(self.fields);
                Ok(())
            }
        }
    }
}

#[derive(Debug)]
enum Over {
    Files,
    Fields,
}

enum Walk {
    Malformed,
    Over(Over),
}

impl From<Over> for Walk {
    fn from(over: Over) -> Walk {
        Walk::Over(over)
    }
}

fn over_fields(fields: usize, most: usize) -> Result<(), Over> {
    if fields > most {
        return Err(Over::Fields);
    }
    Ok(())
}

/// Adds the fields of `bytes` read as a message, and of every length-delimited field in it that
/// reads as one too, to `fields`; false when `bytes` is no message (a string, say).
fn count_fields(bytes: &[u8], depth: usize, fields: &mut usize, most: usize) -> Result<bool, Over> {
    if depth > MAX_DEPTH {
        return Ok(false);
    }
    let each = |_: u64, content: Option<&[u8]>| -> Result<(), Over> {
        *fields += 1;
        if let Some(content) = content {
            count_fields(content, depth + 1, fields, most)?;
        }
        over_fields(*fields, most)
    };
    match walk(bytes, each) {
        Ok(()) => Ok(true),
        Err(Walk::Malformed) => Ok(false),
        Err(Walk::Over(over)) => Err(over),
    }
}

/// Calls `each(number, content)` for every field of the message `bytes`, with the content of
/// the length-delimited ones; stops at the first malformed field or the first Err of `each`.
fn walk<'a>(mut bytes: &'a [u8], mut each: impl FnMut(u64, Option<&'a [u8]>) -> Result<(), Over>) -> Result<(), Walk> {
    while !bytes.is_empty() {
        let key = varint(&mut bytes).ok_or(Walk::Malformed)?;
        let number = key >> 3;
        let content = match key & 7 {
            0 => varint(&mut bytes).map(|_| None),
            1 => skip(&mut bytes, 8).map(|_| None),
            5 => skip(&mut bytes, 4).map(|_| None),
            2 => varint(&mut bytes).and_then(|n| usize::try_from(n).ok()).and_then(|n| skip(&mut bytes, n)).map(Some),
            _ => None, // groups (deprecated, never in descriptors) and invalid wire types
        };
        let content = content.ok_or(Walk::Malformed)?;
        if number == 0 {
            return Err(Walk::Malformed);
        }
        each(number, content)?;
    }
    Ok(())
}

fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// The next `n` bytes, taken off the front.
fn skip<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if bytes.len() < n {
        return None;
    }
    let (taken, rest) = bytes.split_at(n);
    *bytes = rest;
    Some(taken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflection_pb::{FileDescriptorResponse, MessageResponse, ServerReflectionResponse};
    use prost::Message;
    use prost_reflect::prost_types::{DescriptorProto, FileDescriptorProto};

    fn answer(files: Vec<Vec<u8>>) -> Vec<u8> {
        let response = FileDescriptorResponse { file_descriptor_proto: files };
        ServerReflectionResponse { message_response: Some(MessageResponse::FileDescriptorResponse(response)) }
            .encode_to_vec()
    }

    #[test]
    fn an_answer_takes_its_bytes_files_and_fields() {
        let file = FileDescriptorProto {
            name: Some("a.proto".into()),
            message_type: vec![DescriptorProto { name: Some("M".into()), ..Default::default() }],
            ..Default::default()
        };
        let bytes = answer(vec![file.encode_to_vec(), Vec::new()]);
        let mut budget = Budget::default();
        budget.take(&bytes).unwrap();
        assert_eq!(budget.bytes, MAX_BYTES - bytes.len());
        assert_eq!(budget.files, MAX_FILES - 2);
        // The response and its two files, the file's name and message, the message's name (and
        // "a.proto" and "M", which do not read as messages).
        assert_eq!(MAX_FIELDS - budget.fields, 6);
    }

    #[test]
    fn files_are_counted_before_any_is_decoded() {
        let many = answer(vec![Vec::new(); MAX_FILES + 1]);
        assert_eq!(Budget::default().take(&many).unwrap_err(), format!("the server sent over {MAX_FILES} files"));
        let mut budget = Budget::default();
        budget.take(&answer(vec![Vec::new(); MAX_FILES - 1])).unwrap();
        assert!(budget.take(&answer(vec![Vec::new(); 2])).unwrap_err().contains("over 10000 files"));
    }

    #[test]
    fn fields_past_the_bound_are_refused_at_any_depth() {
        // Empty messages, each two bytes on the wire: in the file, then nested in one message.
        let empty = |n: usize| [0x22u8, 0x00].repeat(n);
        let error = Budget::default().take(&answer(vec![empty(MAX_FIELDS)])).unwrap_err();
        assert!(error.contains(&format!("over {MAX_FIELDS} protobuf fields")), "{error}");
        let mut deeper = vec![0x22];
        prost::encoding::encode_varint(2 * MAX_FIELDS as u64, &mut deeper);
        deeper.extend([0x1a, 0x00].repeat(MAX_FIELDS));
        assert!(Budget::default().take(&answer(vec![deeper])).unwrap_err().contains("protobuf fields"));
        let mut budget = Budget::default();
        budget.take(&answer(vec![empty(MAX_FIELDS / 2)])).unwrap();
        assert!(budget.take(&answer(vec![empty(MAX_FIELDS / 2)])).is_err(), "the bound is the resolution's");
    }

    #[test]
    fn answers_past_the_byte_budget_are_refused_together() {
        // A file whose name is bytes that read as no message: few fields, many bytes.
        let mut file = vec![0x0a];
        prost::encoding::encode_varint(MAX_BYTES as u64 / 2, &mut file);
        file.resize(file.len() + MAX_BYTES / 2, 0xff);
        let mut budget = Budget::default();
        let half = answer(vec![file]);
        budget.take(&half).unwrap();
        assert_eq!(budget.take(&half).unwrap_err(), past_bytes());
    }

    #[test]
    fn bytes_that_are_no_message_take_their_bytes_only() {
        let mut budget = Budget::default();
        budget.take(&[0x22, 0xff]).unwrap();
        assert_eq!((budget.bytes, budget.files), (MAX_BYTES - 2, MAX_FILES));
    }
}
