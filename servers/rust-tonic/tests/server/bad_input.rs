//! Requests no tonic client would send, over raw HTTP/2: the server answers
//! each with an error and keeps serving.

use crate::common;

use bytes::Bytes;
use callbench_contract::pb;
use common::{grpc_frame, raw_call, raw_grpc, Server};
use prost::Message;

/// The server still answers a valid call correctly.
async fn still_serving(server: &Server) {
    let reply = raw_grpc(server.addr, "/callbench.v1.Students/List", grpc_frame(&[])).await;
    assert_eq!(reply.grpc_status(), Some(0));
    let decoded = pb::ListStudentsResponse::decode(&reply.body[5..]).expect("a ListStudentsResponse");
    assert_eq!(decoded.students.len(), 2);
}

#[tokio::test]
async fn garbage_is_an_error_never_a_crash() {
    let server = Server::start();
    let cases: Vec<(&str, Bytes)> = vec![
        // Not gRPC framing at all: reads as a huge declared length.
        ("plain garbage", Bytes::from_static(b"hello, this is not a grpc message")),
        // Framed, but not protobuf: field 0 / bad wire type / truncated varint.
        ("framed garbage", grpc_frame(&[0xff, 0xff, 0xff, 0xff, 0xff])),
        ("truncated field", grpc_frame(&[0x12, 0x10, b'a'])),
        // The frame promises more bytes than arrive.
        ("short frame", Bytes::from_static(&[0, 0, 0, 0, 10, 1, 2])),
        ("half a header", Bytes::from_static(&[0, 0])),
        // Compressed flag without any grpc-encoding.
        ("compressed flag", Bytes::from_static(&[1, 0, 0, 0, 1, 0])),
        ("bad flag", Bytes::from_static(&[7, 0, 0, 0, 0])),
    ];
    for path in ["/callbench.v1.Auth/Test", "/callbench.v1.Echo/Echo", "/callbench.v1.Life/Step"] {
        for (name, body) in &cases {
            let reply = raw_grpc(server.addr, path, body.clone()).await;
            let status = reply.grpc_status();
            assert!(status.is_some_and(|s| s != 0), "{path} {name}: {reply:?}");
        }
    }
    still_serving(&server).await;
}

#[tokio::test]
async fn invalid_utf8_in_a_string_is_an_error() {
    let server = Server::start();
    // AuthRequest{id: 1, password: <0xff 0xfe>}
    let reply =
        raw_grpc(server.addr, "/callbench.v1.Auth/Test", grpc_frame(&[0x08, 0x01, 0x12, 0x02, 0xff, 0xfe])).await;
    assert_eq!(reply.grpc_status(), Some(tonic::Code::Internal as i32), "{reply:?}");
    still_serving(&server).await;
}

#[tokio::test]
async fn missing_message_is_an_error() {
    let server = Server::start();
    let reply = raw_grpc(server.addr, "/callbench.v1.Auth/Test", Bytes::new()).await;
    assert!(reply.grpc_status().is_some_and(|s| s != 0), "{reply:?}");
}

#[tokio::test]
async fn a_wrong_content_type_is_415() {
    let server = Server::start();
    let body = grpc_frame(&pb::AuthRequest { id: 1, password: "x".into() }.encode_to_vec());
    for content_type in [Some("application/json"), Some("text/plain"), Some("application/grpc-web"), None] {
        let headers: Vec<(&str, &str)> = content_type.iter().map(|ct| ("content-type", *ct)).collect();
        let reply = raw_call(server.addr, "/callbench.v1.Auth/Test", &headers, body.clone()).await;
        assert_eq!(reply.http_status, 415, "{content_type:?}");
        assert_eq!(reply.grpc_status(), Some(tonic::Code::InvalidArgument as i32), "{content_type:?}");
    }
    // The gRPC content types with a codec or parameters are fine.
    for content_type in ["application/grpc+proto", "application/grpc; charset=utf-8"] {
        let reply =
            raw_call(server.addr, "/callbench.v1.Auth/Test", &[("content-type", content_type)], body.clone()).await;
        assert_eq!(reply.grpc_status(), Some(0), "{content_type}");
    }
    still_serving(&server).await;
}

#[tokio::test]
async fn unknown_methods_are_unimplemented() {
    let server = Server::start();
    for path in ["/callbench.v1.Auth/Nope", "/callbench.v1.Nope/Test", "/nope", "/"] {
        let reply = raw_grpc(server.addr, path, grpc_frame(&[])).await;
        assert_eq!(reply.grpc_status(), Some(tonic::Code::Unimplemented as i32), "{path}");
    }
    still_serving(&server).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_bad_requests_leaves_it_serving() {
    let server = Server::start();
    let mut oversized = vec![0u8; 5 << 20];
    oversized[1..5].copy_from_slice(&((5u32 << 20) - 5).to_be_bytes());
    let bad: Vec<(&str, Bytes)> = vec![
        ("application/grpc", Bytes::from_static(b"garbage garbage garbage")),
        ("application/grpc", grpc_frame(&[0x08, 0x01, 0x12, 0x02, 0xff, 0xfe])),
        ("application/grpc", Bytes::from(oversized)),
        ("application/json", Bytes::from_static(b"{}")),
    ];
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (addr, bad) = (server.addr, bad.clone());
            tokio::spawn(async move {
                for i in 0..25 {
                    let (content_type, body) = &bad[(task + i) % bad.len()];
                    let reply =
                        raw_call(addr, "/callbench.v1.Auth/Test", &[("content-type", content_type)], body.clone())
                            .await;
                    assert!(reply.http_status != 200 || reply.grpc_status().is_some_and(|s| s != 0), "{reply:?}");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("every bad request is answered");
    }
    still_serving(&server).await;
}
