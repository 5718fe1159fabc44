//! JSON <-> protobuf with the proto3 JSON mapping (what grpcurl's `-d` takes
//! and prints): camelCase or original field names in, camelCase out, 64-bit
//! integers as strings, enums by name.

use crate::TranscodeError;
use callbench_primitives::error_text::one_line;
use prost::Message;
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage};

/// The protobuf bytes (unframed) of the request `json` describes; an empty
/// (or blank) string is the empty message. Unknown fields are errors.
pub fn encode_request(method: &MethodDescriptor, json: &str) -> Result<Vec<u8>, TranscodeError> {
    let input = method.input();
    let text = json.trim();
    if text.is_empty() {
        return Ok(Vec::new()); // the empty message encodes to no bytes
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let message = DynamicMessage::deserialize(input.clone(), &mut reader)
        .and_then(|message| reader.end().map(|()| message))
        .map_err(|e| TranscodeError::Message(one_line(&format!("request JSON for {}: {e}", input.full_name()))))?;
    Ok(message.encode_to_vec())
}

/// Decodes one (unframed) response message of `method`.
pub fn decode_response(method: &MethodDescriptor, bytes: &[u8]) -> Result<DynamicMessage, TranscodeError> {
    let output = method.output();
    DynamicMessage::decode(output.clone(), bytes)
        .map_err(|e| TranscodeError::Message(one_line(&format!("response is not a valid {}: {e}", output.full_name()))))
}

/// The message as compact proto3 JSON. Never fails: a message that cannot be
/// shown (an `Any` of an unknown type) gives a bracketed note instead.
pub fn to_json(message: &DynamicMessage) -> String {
    serde_json::to_string(message)
        .unwrap_or_else(|e| format!("<{} not printable as JSON: {e}>", message.descriptor().full_name()))
}
