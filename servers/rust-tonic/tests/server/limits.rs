//! The 4 MiB message limit, plain and gzip-compressed, and gzip replies.

use crate::common;

use callbench_contract::pb;
use callbench_contract::pb::echo_client::EchoClient;
use callbench_workloads::limits::MAX_BODY_BYTES;
use common::{grpc_frame, raw_call, Server};
use prost::Message;
use tonic::codec::CompressionEncoding;
use tonic::transport::Channel;
use tonic::Code;

/// An echo message of exactly `size` encoded bytes: one record with a long name.
fn message_of(size: usize) -> pb::EchoMessage {
    let with_name =
        |n: usize| pb::EchoMessage { records: vec![pb::Record { name: "a".repeat(n), ..Default::default() }] };
    // The name's length prefixes make the size jump now and then; an id fills the gap.
    for n in (size.saturating_sub(16)..=size).rev() {
        for id in [0, 1, 128] {
            let mut message = with_name(n);
            message.records[0].id = id;
            if message.encoded_len() == size {
                return message;
            }
        }
    }
    panic!("no message of {size} bytes");
}

/// A client that can send and receive messages past the limit (the server decides).
fn client(channel: Channel) -> EchoClient<Channel> {
    EchoClient::new(channel).max_decoding_message_size(2 * MAX_BODY_BYTES).max_encoding_message_size(2 * MAX_BODY_BYTES)
}

#[tokio::test]
async fn messages_up_to_4_mib_pass_and_larger_ones_are_resource_exhausted() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    for size in [MAX_BODY_BYTES - 1000, MAX_BODY_BYTES] {
        let message = message_of(size);
        let reply = client.echo(message.clone()).await.unwrap_or_else(|s| panic!("{size} bytes: {s:?}"));
        assert!(reply.into_inner() == message, "{size} bytes come back unchanged");
    }
    for size in [MAX_BODY_BYTES + 1, MAX_BODY_BYTES + 1000, 2 * MAX_BODY_BYTES] {
        let status = client.echo(message_of(size)).await.expect_err("over the limit");
        assert_eq!(status.code(), Code::ResourceExhausted, "{size} bytes: {status:?}");
    }
    // The connection and the server are still fine.
    let small = message_of(100);
    assert!(client.echo(small.clone()).await.expect("OK").into_inner() == small);
}

#[tokio::test]
async fn an_over_limit_header_is_refused_without_the_body() {
    let server = Server::start();
    // Only the header of a 5 MiB message, and the stream left open: the guard
    // answers from the header alone.
    let header = grpc_frame(&[]);
    let mut header = header.to_vec();
    header[1..5].copy_from_slice(&(5u32 << 20).to_be_bytes());
    let addr = server.addr;
    let call = async move {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (client, connection) = h2::client::handshake(tcp).await.expect("handshake");
        tokio::spawn(connection);
        let mut client = client.ready().await.expect("ready");
        let request = http::Request::post(format!("http://{addr}/callbench.v1.Echo/Echo"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .expect("a request");
        let (response, mut send) = client.send_request(request, false).expect("sent");
        send.send_data(header.into(), false).expect("header sent");
        let response = response.await.expect("a response");
        let status = response.headers().get("grpc-status").map(|v| v.as_bytes().to_vec());
        drop(send);
        status
    };
    let status =
        tokio::time::timeout(std::time::Duration::from_secs(5), call).await.expect("answered without the body");
    assert_eq!(status.as_deref(), Some(&b"8"[..]));
}

#[tokio::test]
async fn gzip_requests_and_replies() {
    let server = Server::start();
    let mut client = client(server.channel().await)
        .send_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Gzip);
    let message = pb::EchoMessage::from(callbench_workloads::echo::payload(50));
    assert_eq!(client.echo(message.clone()).await.expect("OK").into_inner(), message);

    // Decompressed to exactly 4 MiB: passes.
    let exact = message_of(MAX_BODY_BYTES);
    assert!(client.echo(exact.clone()).await.expect("OK").into_inner() == exact);
    // A few KiB on the wire that inflate past 4 MiB: refused by tonic's decompression limit.
    let status = client.echo(message_of(MAX_BODY_BYTES + 1)).await.expect_err("inflates past the limit");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
}

#[tokio::test]
async fn replies_are_gzip_only_when_the_client_accepts_it() {
    let server = Server::start();
    let request = grpc_frame(&pb::EchoMessage::from(callbench_workloads::echo::payload(20)).encode_to_vec());
    let plain =
        raw_call(server.addr, "/callbench.v1.Echo/Echo", &[("content-type", "application/grpc")], request.clone())
            .await;
    assert_eq!(plain.grpc_status(), Some(0));
    assert_eq!(plain.headers.get("grpc-encoding"), None);
    assert_eq!(plain.body.first(), Some(&0), "uncompressed flag");

    let headers = [("content-type", "application/grpc"), ("grpc-accept-encoding", "gzip")];
    let gzipped = raw_call(server.addr, "/callbench.v1.Echo/Echo", &headers, request).await;
    assert_eq!(gzipped.grpc_status(), Some(0));
    assert_eq!(gzipped.headers.get("grpc-encoding").map(|v| v.as_bytes()), Some(&b"gzip"[..]));
    assert_eq!(gzipped.body.first(), Some(&1), "compressed flag");
}
