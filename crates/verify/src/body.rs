//! The bytes a vector sends: REST bodies as given, gRPC JSON encoded to protobuf.

use crate::error::{because, chain};
use crate::VerifyError::{self, BadInput};
use base64::Engine;
use bytes::Bytes;
use callbench_contract::rest_json;
use callbench_contract::vectors::{Body, Fill};
use prost::Message;
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
use std::sync::OnceLock;

/// The contract's descriptors plus grpc.health.v1 (whose proto is not ours).
pub(crate) fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut pool = callbench_contract::descriptor_pool().clone();
        pool.decode_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .expect("tonic-health's descriptors decode");
        pool
    })
}

/// The method `package.Service/Method`, if the contract (or health) defines it.
pub fn method(name: &str) -> Option<MethodDescriptor> {
    let (service, method) = name.split_once('/')?;
    pool().get_service_by_name(service)?.methods().find(|m| m.name() == method)
}

/// The contract's message `name`; one it has not is [`VerifyError::BadInput`].
pub(crate) fn message(name: &str) -> Result<MessageDescriptor, VerifyError> {
    pool().get_message_by_name(name).ok_or_else(|| BadInput(format!("the contract has no message {name}")))
}

/// A REST body: JSON compact, NDJSON as its lines together, the rest raw. A body the vector gives
/// badly (bad base64) is [`VerifyError::BadInput`], as every error of this file.
pub(crate) fn rest_bytes(body: &Body) -> Result<Bytes, VerifyError> {
    match body {
        Body::Json(value) => Ok(Bytes::from(serde_json::to_vec(value).map_err(|e| BadInput(chain(&e)))?)),
        Body::Ndjson(_) => Ok(rest_pieces(body)?.concat().into()),
        other => raw_bytes(other),
    }
}

/// A REST body as the pieces a streamed upload sends: an NDJSON body line by line (each compact,
/// ending in a newline), any other whole.
pub(crate) fn rest_pieces(body: &Body) -> Result<Vec<Bytes>, VerifyError> {
    match body {
        Body::Ndjson(values) => values
            .iter()
            .map(|v| {
                let mut line = serde_json::to_vec(v).map_err(|e| BadInput(chain(&e)))?;
                line.push(b'\n');
                Ok(Bytes::from(line))
            })
            .collect(),
        other => Ok(vec![rest_bytes(other)?]),
    }
}

/// A gRPC message: JSON is proto3 JSON of `input`, encoded; the rest raw.
pub(crate) fn grpc_bytes(body: &Body, input: Option<&MessageDescriptor>) -> Result<Bytes, VerifyError> {
    match body {
        Body::Json(value) => {
            let desc = input.ok_or_else(|| BadInput("a JSON request needs a method the contract defines".into()))?;
            let message =
                rest_json::message_from_proto_json(desc, value).map_err(|e| BadInput(format!("request JSON: {e}")))?;
            Ok(Bytes::from(message.encode_to_vec()))
        }
        other => raw_bytes(other),
    }
}

fn raw_bytes(body: &Body) -> Result<Bytes, VerifyError> {
    let b64 = |s: &str| {
        base64::engine::general_purpose::STANDARD.decode(s).map_err(|e| BadInput(because("bad base64 in a vector", &e)))
    };
    match body {
        Body::Json(_) => unreachable!("handled by the callers"),
        Body::Ndjson(_) => Err(BadInput("an NDJSON body is for REST calls, not a gRPC message".into())),
        Body::Text(text) => Ok(Bytes::from(text.clone())),
        Body::Base64(data) => Ok(Bytes::from(b64(data)?)),
        Body::Fill(Fill { byte, size, prefix_base64, suffix_base64 }) => {
            let mut out = b64(prefix_base64)?;
            out.resize(out.len() + size, *byte);
            out.extend(b64(suffix_base64)?);
            Ok(Bytes::from(out))
        }
    }
}
