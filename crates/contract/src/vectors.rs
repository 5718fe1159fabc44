//! The shared test vectors of `contract/vectors/*.json`, embedded at build
//! time. Their format is documented in contract/README.md; every server in
//! every language is judged by them.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// (file name, contents) of every vector file.
pub const FILES: &[(&str, &str)] = &[
    ("auth.json", include_str!("../../../contract/vectors/auth.json")),
    ("students.json", include_str!("../../../contract/vectors/students.json")),
    ("cars.json", include_str!("../../../contract/vectors/cars.json")),
    ("life.json", include_str!("../../../contract/vectors/life.json")),
    ("echo.json", include_str!("../../../contract/vectors/echo.json")),
    ("records.json", include_str!("../../../contract/vectors/records.json")),
    ("health.json", include_str!("../../../contract/vectors/health.json")),
    ("protocol.json", include_str!("../../../contract/vectors/protocol.json")),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorFile {
    pub workload: String,
    #[serde(default)]
    pub description: String,
    pub vectors: Vec<Vector>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    pub name: String,
    /// `ok`, or the bad-input class (malformed-json, wrong-type, ...).
    pub class: String,
    /// A bad input refused only after the workload ran (the population limit): floods send it rarely.
    #[serde(default)]
    pub heavy: bool,
    #[serde(default)]
    pub rest: Option<RestCase>,
    #[serde(default)]
    pub grpc: Option<GrpcCase>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestCase {
    pub method: String,
    pub path: String,
    /// Extra headers; an empty value means "do not send this header".
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub body: Option<Body>,
    pub expect: RestExpect,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestExpect {
    pub status: u16,
    /// The response message type (e.g. `callbench.v1.AuthResponse`) when a body is expected.
    #[serde(default)]
    pub message: Option<String>,
    /// The expected body, in REST JSON.
    #[serde(default)]
    pub json: Option<Value>,
    /// A streamed answer (`application/x-ndjson`): every line in order, each a `message` in REST JSON.
    #[serde(default)]
    pub ndjson: Option<Vec<Value>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcCase {
    /// `package.Service/Method`.
    pub method: String,
    /// Overrides `application/grpc`.
    #[serde(default)]
    pub content_type: Option<String>,
    /// The one request message of a unary or server-streaming call.
    #[serde(default)]
    pub request: Option<Body>,
    /// The request messages of a client- or bidi-streaming call: sent in order, then half-closed.
    #[serde(default)]
    pub requests: Option<Vec<Body>>,
    pub expect: GrpcExpect,
}

impl GrpcCase {
    /// The request messages, in order (one for `request`).
    pub fn bodies(&self) -> Vec<&Body> {
        match (&self.request, &self.requests) {
            (Some(one), _) => vec![one],
            (None, Some(many)) => many.iter().collect(),
            (None, None) => Vec::new(),
        }
    }

    /// Whether the request is a stream of messages (`requests`).
    pub fn streams_requests(&self) -> bool {
        self.requests.is_some()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcExpect {
    /// A gRPC code name (`OK`, `NOT_FOUND`, ...), or `ANY_ERROR`: anything but OK,
    /// including an HTTP-level rejection.
    pub code: String,
    /// The expected reply, in proto3 JSON (of a streamed answer: its first message).
    #[serde(default)]
    pub json: Option<Value>,
    /// A streamed answer: every message in order, in proto3 JSON (before the status, when it is an error).
    #[serde(default)]
    pub messages: Option<Vec<Value>>,
}

/// A request body (REST) or message (gRPC).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Body {
    /// JSON; for gRPC it is proto3 JSON of the method's input type, encoded to protobuf.
    Json(Value),
    /// JSON values sent as compact lines, each ending in a newline (`application/x-ndjson`, chunked).
    Ndjson(Vec<Value>),
    /// Raw UTF-8 text, sent as is.
    Text(String),
    /// Raw bytes (base64), sent as is.
    Base64(String),
    /// `prefix` + `size` copies of `byte` + `suffix` (prefix/suffix base64): oversized bodies.
    Fill(Fill),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fill {
    pub byte: u8,
    pub size: usize,
    #[serde(default)]
    pub prefix_base64: String,
    #[serde(default)]
    pub suffix_base64: String,
}

/// Every vector file, parsed.
pub fn all() -> Vec<VectorFile> {
    FILES
        .iter()
        .map(|(name, text)| serde_json::from_str(text).unwrap_or_else(|e| panic!("contract/vectors/{name}: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{descriptor_pool, rest_json};

    #[test]
    fn every_file_parses_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for file in all() {
            for v in &file.vectors {
                assert!(names.insert(v.name.clone()), "duplicate vector {}", v.name);
                assert!(v.rest.is_some() != v.grpc.is_some(), "{}: exactly one of rest/grpc", v.name);
                if let Some(grpc) = &v.grpc {
                    assert!(grpc.request.is_some() != grpc.requests.is_some(), "{}: request or requests", v.name);
                }
            }
        }
    }

    #[test]
    fn expected_messages_match_the_contract() {
        let pool = descriptor_pool();
        for file in all() {
            for v in &file.vectors {
                if let Some(rest) = &v.rest {
                    if let Some(name) = &rest.expect.message {
                        let desc = pool.get_message_by_name(name).unwrap_or_else(|| panic!("{}: no {name}", v.name));
                        let lines = rest.expect.ndjson.iter().flatten();
                        for json in rest.expect.json.iter().chain(lines) {
                            rest_json::message_from_rest(&desc, json).unwrap_or_else(|e| panic!("{}: {e}", v.name));
                        }
                    }
                }
                if let Some(grpc) = &v.grpc {
                    let (service, method) = grpc.method.split_once('/').unwrap();
                    let known =
                        pool.get_service_by_name(service).and_then(|s| s.methods().find(|m| m.name() == method));
                    let Some(m) = known else { continue };
                    let streamed = grpc.expect.messages.iter().flatten();
                    for json in grpc.expect.json.iter().chain(streamed) {
                        rest_json::message_from_proto_json(&m.output(), json)
                            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
                    }
                    assert_eq!(m.is_client_streaming(), grpc.streams_requests(), "{}: requests or request", v.name);
                    if grpc.expect.messages.is_some() {
                        assert!(m.is_server_streaming(), "{}: messages of a unary answer", v.name);
                    }
                }
            }
        }
    }
}
