//! A gRPC call's method and messages: the method from .proto files, a protoset or the server's
//! reflection, the request messages from `-d`, and `--expect-body` as a check of each answer.

use crate::error::LoadError;
use crate::spec::LoadSpec;
use callbench_dynproto::{MethodDescriptor, ReflectionConn, Source};
use callbench_engine::net::Endpoint;
use callbench_engine::request::BodyCheck;
use std::time::Duration;

/// The request messages of a call from `-d`: one JSON message (none given: the empty message) for
/// a unary or server-streaming method; for a client- or bidi-streaming one, the messages of a
/// stream, as JSON values one after another (newline-delimited JSON, as `-d @FILE` reads a file)
/// or as one JSON array of them (as ghz takes them).
pub(crate) fn request_messages(method: &MethodDescriptor, json: &str) -> Result<Vec<Vec<u8>>, String> {
    if !method.is_client_streaming() {
        return Ok(vec![callbench_transcode::encode_request(method, json)?]);
    }
    let mut values = Vec::new();
    for (i, value) in serde_json::Deserializer::from_str(json).into_iter::<serde_json::Value>().enumerate() {
        let value = value.map_err(|e| format!("request message {} of -d is not JSON: {e}", i + 1))?;
        match value {
            serde_json::Value::Array(items) if i == 0 && values.is_empty() => values.extend(items),
            other => values.push(other),
        }
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            callbench_transcode::encode_request(method, &v.to_string())
                .map_err(|e| format!("request message {}: {e}", i + 1))
        })
        .collect()
}

/// The method `name` from the spec's descriptors: its .proto files, its protoset, or else the
/// server's reflection over the probe's connection.
pub(crate) async fn resolve_method(
    spec: &LoadSpec,
    endpoint: &Endpoint,
    probe: callbench_engine::h2pool::Connection,
    name: &str,
) -> Result<MethodDescriptor, LoadError> {
    let source = match (&spec.protos[..], &spec.protoset) {
        ([], None) => Source::Reflection,
        ([], Some(set)) => Source::Protoset(set.clone()),
        (files, None) => Source::Protos { files: files.to_vec(), import_paths: spec.import_paths.clone() },
        (_, Some(_)) => return Err(LoadError::Settings("give --proto or --protoset, not both".into())),
    };
    let scheme = if endpoint.is_tls() { "https" } else { "http" };
    let mut conn = ReflectionConn::new(probe, endpoint.authority(), scheme);
    conn.timeout = Duration::from_secs(10);
    callbench_dynproto::resolve(&source, name, Some(conn)).await.map_err(|e| {
        LoadError::Target(match source {
            Source::Reflection => format!("{e} (no --proto or --protoset given, so the server's reflection was asked)"),
            _ => e.to_string(),
        })
    })
}

/// `--expect-body` as a check of each answer: the same message as the JSON, field by field.
pub(crate) fn expected_message_check(method: &MethodDescriptor, json: &[u8]) -> Result<BodyCheck, String> {
    let json = std::str::from_utf8(json).map_err(|_| "--expect-body is not UTF-8 JSON".to_string())?;
    let output = method.output();
    let expected =
        prost_reflect::DynamicMessage::deserialize(output.clone(), &mut serde_json::Deserializer::from_str(json))
            .map_err(|e| format!("--expect-body is not a {}: {e}", output.full_name()))?;
    Ok(Box::new(move |bytes: &[u8]| {
        prost_reflect::DynamicMessage::decode(output.clone(), bytes)
            .is_ok_and(|m| callbench_contract::rest_json::same_message(&m, &expected))
    }))
}
