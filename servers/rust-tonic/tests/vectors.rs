//! Every gRPC vector of `contract/vectors/*.json`, as `callbench verify` sends
//! them: raw messages over HTTP/2, replies compared as messages.

mod common;

use base64::Engine;
use callbench_contract::vectors::{self, Body, GrpcCase};
use callbench_contract::{descriptor_pool, rest_json};
use common::{grpc_frame, raw_call, RawReply, Server};
use prost::Message;
use prost_reflect::DynamicMessage;

/// The numeric code of a gRPC status name, as the vectors spell them.
fn code_number(name: &str) -> i32 {
    let names = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
    ];
    let index = names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("unknown code {name}"));
    i32::try_from(index).expect("a small index")
}

/// The request message bytes of a vector.
fn request_bytes(case: &GrpcCase) -> Vec<u8> {
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.decode(text).expect("valid base64");
    match &case.request {
        Body::Json(json) => {
            let (service, method) = case.method.split_once('/').expect("pkg.Service/Method");
            let method = descriptor_pool()
                .get_service_by_name(service)
                .and_then(|s| s.methods().find(|m| m.name() == method))
                .map(|m| m.input())
                .or_else(|| (service == "grpc.health.v1.Health").then(health_check_request));
            let desc = method.unwrap_or_else(|| panic!("{}: unknown method", case.method));
            rest_json::message_from_proto_json(&desc, json).expect("the vector's JSON parses").encode_to_vec()
        }
        Body::Text(text) => text.as_bytes().to_vec(),
        Body::Base64(text) => b64(text),
        Body::Fill(fill) => {
            let mut bytes = b64(&fill.prefix_base64);
            bytes.resize(bytes.len() + fill.size, fill.byte);
            bytes.extend(b64(&fill.suffix_base64));
            bytes
        }
    }
}

/// grpc.health.v1.HealthCheckRequest is not in the contract's pool; its JSON is `{"service": ...}`.
fn health_check_request() -> prost_reflect::MessageDescriptor {
    let pool =
        prost_reflect::DescriptorPool::decode(tonic_health::pb::FILE_DESCRIPTOR_SET).expect("health descriptors");
    pool.get_message_by_name("grpc.health.v1.HealthCheckRequest").expect("HealthCheckRequest")
}

fn check(name: &str, case: &GrpcCase, reply: &RawReply) {
    let expected = case.expect.code.as_str();
    let got = reply.grpc_status();
    if expected == "ANY_ERROR" {
        let refused = reply.http_status != 200 || got.is_some_and(|c| c != 0);
        assert!(refused, "{name}: expected an error, got {reply:?}");
        return;
    }
    assert_eq!(reply.http_status, 200, "{name}");
    assert_eq!(got, Some(code_number(expected)), "{name}: {:?}", reply.headers.get("grpc-message"));
    let Some(json) = &case.expect.json else { return };
    assert_eq!(reply.body.first(), Some(&0), "{name}: uncompressed reply");
    let (service, method) = case.method.split_once('/').expect("pkg.Service/Method");
    if service == "grpc.health.v1.Health" {
        // {"status": "SERVING"} is the only health reply the vectors expect.
        use tonic_health::pb::{health_check_response::ServingStatus, HealthCheckResponse};
        assert_eq!(json["status"], "SERVING", "{name}");
        let got = HealthCheckResponse::decode(&reply.body[5..]).expect("the reply decodes");
        assert_eq!(got.status(), ServingStatus::Serving, "{name}");
        return;
    }
    let output = descriptor_pool()
        .get_service_by_name(service)
        .and_then(|s| s.methods().find(|m| m.name() == method))
        .expect("known")
        .output();
    let got = DynamicMessage::decode(output.clone(), &reply.body[5..]).expect("the reply decodes");
    let want = rest_json::message_from_proto_json(&output, json).expect("the expected JSON parses");
    assert!(rest_json::same_message(&got, &want), "{name}: got {}", rest_json::message_to_rest(&got));
}

#[tokio::test]
async fn every_grpc_vector_passes() {
    let server = Server::start();
    let mut count = 0;
    for file in vectors::all() {
        for vector in file.vectors {
            let Some(case) = &vector.grpc else { continue };
            let content_type = case.content_type.as_deref().unwrap_or("application/grpc");
            let body = grpc_frame(&request_bytes(case));
            let reply =
                raw_call(server.addr, &format!("/{}", case.method), &[("content-type", content_type)], body).await;
            check(&vector.name, case, &reply);
            count += 1;
        }
    }
    assert!(count >= 70, "only {count} gRPC vectors");
}
