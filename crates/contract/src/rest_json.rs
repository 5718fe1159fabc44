//! The REST mapping: REST JSON is the proto3 JSON mapping (lowerCamelCase
//! names, enum names) except that 64-bit integers are JSON numbers and a
//! `callbench.v1.Cell` is the pair `[x, y]`. These functions move between the
//! two so one dynamic message can judge a REST body and a gRPC reply alike.

use prost_reflect::{DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, ReflectMessage, SerializeOptions};
use serde_json::{Map, Value};

const CELL: &str = "callbench.v1.Cell";

/// Why JSON is not the message it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// Not in the REST mapping's shape (a cell that is not a pair `[x, y]`).
    #[error("{0}")]
    NotRest(String),
    /// Not the message: an unknown field, a value of the wrong type (prost-reflect's reason).
    #[error("{0}")]
    NotTheMessage(String),
}

/// The message, for callers whose own errors are still strings.
impl From<JsonError> for String {
    fn from(e: JsonError) -> String {
        e.to_string()
    }
}

/// Parses a REST JSON body as the message `desc` (unknown fields rejected).
pub fn message_from_rest(desc: &MessageDescriptor, rest: &Value) -> Result<DynamicMessage, JsonError> {
    let proto_json = rest_to_proto_json(desc, rest).map_err(JsonError::NotRest)?;
    let options = DeserializeOptions::new().deny_unknown_fields(true);
    DynamicMessage::deserialize_with_options(desc.clone(), proto_json, &options)
        .map_err(|e| JsonError::NotTheMessage(e.to_string()))
}

/// Parses proto3 JSON (as in gRPC vectors) as the message `desc`.
pub fn message_from_proto_json(desc: &MessageDescriptor, json: &Value) -> Result<DynamicMessage, JsonError> {
    let options = DeserializeOptions::new().deny_unknown_fields(true);
    DynamicMessage::deserialize_with_options(desc.clone(), json.clone(), &options)
        .map_err(|e| JsonError::NotTheMessage(e.to_string()))
}

/// The REST JSON of a message: defaults omitted, int64 as numbers, cells as pairs.
pub fn message_to_rest(message: &DynamicMessage) -> Value {
    let options = SerializeOptions::new().stringify_64_bit_integers(false).skip_default_fields(true);
    let mut ser = serde_json::Serializer::new(Vec::new());
    message.serialize_with_options(&mut ser, &options).expect("a dynamic message serializes");
    let value: Value = serde_json::from_slice(&ser.into_inner()).expect("serde_json reads its own output");
    proto_to_rest_json(&message.descriptor(), value)
}

/// Equal as messages: a field set to its default counts as absent.
pub fn same_message(a: &DynamicMessage, b: &DynamicMessage) -> bool {
    a.descriptor() == b.descriptor() && message_to_rest(a) == message_to_rest(b)
}

fn rest_to_proto_json(desc: &MessageDescriptor, rest: &Value) -> Result<Value, String> {
    let Value::Object(fields) = rest else { return Ok(rest.clone()) };
    let mut out = Map::new();
    for (name, value) in fields {
        let field = desc.get_field_by_json_name(name).or_else(|| desc.get_field_by_name(name));
        let converted = match field.as_ref().map(|f| f.kind()) {
            Some(Kind::Message(m)) if m.full_name() == CELL => cells_from_pairs(value)?,
            Some(Kind::Message(m)) => map_values(value, |v| rest_to_proto_json(&m, v))?,
            _ => value.clone(),
        };
        out.insert(name.clone(), converted);
    }
    Ok(Value::Object(out))
}

fn proto_to_rest_json(desc: &MessageDescriptor, value: Value) -> Value {
    let Value::Object(fields) = value else { return value };
    let mut out = Map::new();
    for (name, value) in fields {
        let converted = match desc.get_field_by_json_name(&name).map(|f| f.kind()) {
            Some(Kind::Message(m)) if m.full_name() == CELL => cells_to_pairs(value),
            Some(Kind::Message(m)) => match value {
                Value::Array(items) => Value::Array(items.into_iter().map(|v| proto_to_rest_json(&m, v)).collect()),
                other => proto_to_rest_json(&m, other),
            },
            _ => value,
        };
        out.insert(name, converted);
    }
    Value::Object(out)
}

fn map_values(value: &Value, f: impl Fn(&Value) -> Result<Value, String>) -> Result<Value, String> {
    match value {
        Value::Array(items) => items.iter().map(f).collect::<Result<Vec<_>, _>>().map(Value::Array),
        other => f(other),
    }
}

fn cells_from_pairs(value: &Value) -> Result<Value, String> {
    let pair = |v: &Value| match v.as_array().map(|a| a.as_slice()) {
        Some([x, y]) => Ok(serde_json::json!({ "x": x, "y": y })),
        _ => Err(format!("a cell must be a pair [x, y], got {v}")),
    };
    match value {
        Value::Array(items) if items.first().is_some_and(|v| v.is_number()) => pair(value),
        Value::Array(items) => items.iter().map(pair).collect::<Result<Vec<_>, _>>().map(Value::Array),
        other => Err(format!("expected a list of [x, y] cells, got {other}")),
    }
}

fn cells_to_pairs(value: Value) -> Value {
    let pair = |v: Value| {
        let get = |k: &str| v.get(k).cloned().unwrap_or(Value::from(0));
        Value::Array(vec![get("x"), get("y")])
    };
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(pair).collect()),
        other => pair(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor_pool;
    use serde_json::json;

    fn desc(name: &str) -> MessageDescriptor {
        descriptor_pool().get_message_by_name(name).unwrap()
    }

    #[test]
    fn cells_are_pairs_and_round_trip() {
        let rest = json!({"ntimes": 3, "board": [[0, 2], [-1, 5]]});
        let m = message_from_rest(&desc("callbench.v1.StepRequest"), &rest).unwrap();
        assert_eq!(message_to_rest(&m), rest);
    }

    #[test]
    fn int64_are_numbers_and_names_are_camel_case() {
        let rest = json!({"records": [{"id": 12, "kind": "KIND_LARGE", "samples": [1, 2]}]});
        let m = message_from_rest(&desc("callbench.v1.EchoMessage"), &rest).unwrap();
        assert_eq!(message_to_rest(&m), rest);
        let cars = json!({"driver": {"driverId": "x"}});
        let m = message_from_rest(&desc("callbench.v1.CarMessage"), &cars).unwrap();
        assert_eq!(message_to_rest(&m), cars);
    }

    #[test]
    fn unknown_fields_and_bad_cells_are_refused() {
        assert!(message_from_rest(&desc("callbench.v1.AuthResponse"), &json!({"hash": "a", "x": 1})).is_err());
        assert!(message_from_rest(&desc("callbench.v1.Board"), &json!({"board": [[1, 2, 3]]})).is_err());
    }

    #[test]
    fn workload_json_is_rest_json() {
        // The serde types the Rust servers use produce exactly the REST mapping.
        let students = serde_json::to_value(callbench_workloads::students::list()).unwrap();
        let m = message_from_rest(&desc("callbench.v1.ListStudentsResponse"), &students).unwrap();
        assert_eq!(message_to_rest(&m), students);
        let echo = serde_json::to_value(callbench_workloads::echo::payload(4)).unwrap();
        let m = message_from_rest(&desc("callbench.v1.EchoMessage"), &echo).unwrap();
        let back = message_from_rest(&desc("callbench.v1.EchoMessage"), &message_to_rest(&m)).unwrap();
        assert!(same_message(&back, &m));
        assert!(!same_message(&back, &DynamicMessage::new(desc("callbench.v1.EchoMessage"))));
    }
}
