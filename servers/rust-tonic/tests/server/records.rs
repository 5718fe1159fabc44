//! `callbench.v1.Records`, the streaming calls: uploads of 0, 1 and 1000 records, a conversation
//! answered message by message, downloads up to the largest count, their errors, the message limit
//! inside a stream, and a bidirectional call answered before its first message (with and without
//! the guard).

use crate::common;

use bytes::Bytes;
use callbench_contract::pb;
use callbench_contract::pb::records_client::RecordsClient;
use callbench_workloads::limits::MAX_BODY_BYTES;
use callbench_workloads::records::{self, UploadSummary};
use common::{grpc_frame, raw_grpc, Server};
use futures_util::stream::{self, Stream, StreamExt};
use prost::Message;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::codec::CompressionEncoding;
use tonic::transport::Channel;
use tonic::Code;

fn client(channel: Channel) -> RecordsClient<Channel> {
    RecordsClient::new(channel).max_encoding_message_size(2 * MAX_BODY_BYTES)
}

/// Record `i` of a download, as protobuf.
fn downloaded(i: usize) -> pb::Record {
    let message =
        pb::EchoMessage::from(callbench_workloads::echo::EchoMessage { records: vec![records::downloaded(i)] });
    message.records.into_iter().next().expect("one record")
}

fn summary(s: UploadSummary) -> pb::UploadSummary {
    pb::UploadSummary {
        count: s.count,
        active_count: s.active_count,
        first_id: s.first_id,
        last_id: s.last_id,
        sample_count: s.sample_count,
    }
}

/// A request stream fed by the test, message by message; dropping the sender half-closes it.
fn fed<T: Send + 'static>() -> (mpsc::Sender<T>, impl Stream<Item = T> + Send + 'static) {
    let (send, receive) = mpsc::channel(1);
    (send, stream::unfold(receive, |mut receive| async move { receive.recv().await.map(|m| (m, receive)) }))
}

#[tokio::test]
async fn upload_sums_up_0_1_and_1000_records() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    for n in [0, 1, 1000] {
        let sent: Vec<pb::Record> = (0..n).map(downloaded).collect();
        let reply = client.upload(stream::iter(sent)).await.expect("OK").into_inner();
        let expected = UploadSummary::of(&(0..n).map(records::downloaded).collect::<Vec<_>>()).expect("valid");
        assert_eq!(reply, summary(expected), "{n} records");
    }
    let reply = client.upload(stream::iter([downloaded(0)])).await.expect("OK").into_inner();
    assert_eq!(reply, pb::UploadSummary { count: 1, active_count: 1, first_id: 1, last_id: 1, sample_count: 3 });
}

#[tokio::test]
async fn streams_are_gzip_both_ways() {
    let server = Server::start();
    let mut client = client(server.channel().await)
        .send_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Gzip);
    let reply = client.upload(stream::iter((0..100).map(downloaded))).await.expect("OK").into_inner();
    assert_eq!(reply.count, 100);
    let answers = client.download(pb::DownloadRequest { count: 100 }).await.expect("OK").into_inner();
    let got: Vec<pb::Record> = answers.map(|r| r.expect("OK")).collect().await;
    assert_eq!(got, (0..100).map(downloaded).collect::<Vec<_>>());
}

#[tokio::test]
async fn upload_refuses_an_invalid_record() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    let unknown_kind = pb::Record { kind: 9, ..downloaded(2) };
    let nan = pb::Record { score: f64::NAN, ..downloaded(2) };
    for (name, bad) in [("unknown kind", unknown_kind), ("NaN score", nan)] {
        let sent = [downloaded(0), downloaded(1), bad, downloaded(3)];
        let status = client.upload(stream::iter(sent)).await.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
        assert!(status.message().starts_with("record 2: "), "{name}: {status:?}");
    }
    // The channel still serves.
    assert_eq!(client.upload(stream::iter([downloaded(5)])).await.expect("OK").into_inner().count, 1);
}

#[tokio::test]
async fn converse_answers_each_message_before_the_next_is_sent() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    let (send, requests) = fed();
    let mut answers = client.converse(requests).await.expect("OK").into_inner();
    for n in 0..5 {
        let message = pb::EchoMessage { records: (0..n).map(downloaded).collect() };
        send.send(message.clone()).await.expect("the call is open");
        let answer = tokio::time::timeout(Duration::from_secs(5), answers.message()).await.expect("answered at once");
        assert_eq!(answer.expect("OK"), Some(message), "message {n}");
    }
    drop(send); // half-close: the call ends OK
    assert_eq!(answers.message().await.expect("OK"), None);
}

#[tokio::test]
async fn converse_ends_with_invalid_argument_after_the_answers_before_it() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    let message = |i: usize| pb::EchoMessage { records: vec![downloaded(i)] };
    let bad = pb::EchoMessage { records: vec![pb::Record { kind: 9, ..downloaded(2) }] };
    let sent = [message(0), message(1), bad, message(3)];
    let mut answers = client.converse(stream::iter(sent)).await.expect("OK").into_inner();
    assert_eq!(answers.message().await.expect("OK"), Some(message(0)));
    assert_eq!(answers.message().await.expect("OK"), Some(message(1)));
    assert_eq!(answers.message().await.expect_err("the third is invalid").code(), Code::InvalidArgument);

    // None at all: the call ends OK with no answer.
    let mut answers = client.converse(stream::iter([])).await.expect("OK").into_inner();
    assert_eq!(answers.message().await.expect("OK"), None);
}

#[tokio::test]
async fn download_sends_count_records_in_order() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    for count in [0, 3] {
        let answers = client.download(pb::DownloadRequest { count }).await.expect("OK").into_inner();
        let got: Vec<pb::Record> = answers.map(|r| r.expect("OK")).collect().await;
        assert_eq!(got, (0..count as usize).map(downloaded).collect::<Vec<_>>());
    }
    let mut answers = client.download(pb::DownloadRequest { count: 100_000 }).await.expect("OK").into_inner();
    let mut n = 0;
    while let Some(record) = answers.message().await.expect("OK") {
        if n % 9_999 == 0 {
            assert_eq!(record, downloaded(n), "record {n}");
        }
        n += 1;
    }
    assert_eq!(n, 100_000);
    for count in [-1, 100_001, i64::MIN] {
        let status = client.download(pb::DownloadRequest { count }).await.expect_err("out of range");
        assert_eq!(status.code(), Code::InvalidArgument, "count {count}");
    }
}

#[tokio::test]
async fn an_over_limit_message_in_a_stream_is_resource_exhausted() {
    let server = Server::start();
    let mut client = client(server.channel().await);
    let large = pb::Record { name: "a".repeat(MAX_BODY_BYTES), ..Default::default() };
    for first in [false, true] {
        let sent = if first { vec![large.clone()] } else { vec![downloaded(0), large.clone()] };
        let status = client.upload(stream::iter(sent)).await.expect_err("over the limit");
        assert_eq!(status.code(), Code::ResourceExhausted, "first message: {first}: {status:?}");
    }
    let message = pb::EchoMessage { records: vec![large] };
    let mut answers =
        client.converse(stream::iter([pb::EchoMessage::default(), message])).await.expect("OK").into_inner();
    assert_eq!(answers.message().await.expect("OK"), Some(pb::EchoMessage::default()));
    assert_eq!(answers.message().await.expect_err("over the limit").code(), Code::ResourceExhausted);
}

#[tokio::test]
async fn a_conversation_gets_its_headers_before_its_first_message() {
    for flags in [&[][..], &["--no-guard"]] {
        let server = Server::start_with(flags);
        let addr = server.addr;
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (client, connection) = h2::client::handshake(tcp).await.expect("handshake");
        tokio::spawn(connection);
        let mut client = client.ready().await.expect("ready");
        let request = http::Request::post(format!("http://{addr}/callbench.v1.Records/Converse"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .expect("a request");
        let (response, mut send) = client.send_request(request, false).expect("sent");
        let response =
            tokio::time::timeout(Duration::from_secs(5), response).await.expect("headers before any message");
        let (parts, mut body) = response.expect("a response").into_parts();
        assert_eq!(parts.status, 200, "{flags:?}");
        // Then one message and its answer, and the half-close ends the call OK.
        let message = pb::EchoMessage { records: vec![downloaded(7)] };
        send.send_data(grpc_frame(&message.encode_to_vec()), true).expect("sent");
        let answer = body.data().await.expect("an answer").expect("its data");
        assert_eq!(answer, grpc_frame(&message.encode_to_vec()), "{flags:?}");
        assert!(body.data().await.is_none());
        let trailers = body.trailers().await.expect("trailers").expect("some");
        assert_eq!(trailers.get("grpc-status").map(|v| v.as_bytes()), Some(&b"0"[..]), "{flags:?}");
    }
}

#[tokio::test]
async fn raw_streams_of_several_messages_in_one_body() {
    let server = Server::start();
    let frames: Vec<Bytes> = (0..3).map(|i| grpc_frame(&downloaded(i).encode_to_vec())).collect();
    let reply = raw_grpc(server.addr, "/callbench.v1.Records/Upload", frames.concat().into()).await;
    assert_eq!(reply.grpc_status(), Some(0), "{reply:?}");
    let got = pb::UploadSummary::decode(&reply.body[5..]).expect("an UploadSummary");
    assert_eq!(got, pb::UploadSummary { count: 3, active_count: 2, first_id: 1, last_id: 3, sample_count: 9 });

    let request = grpc_frame(&pb::DownloadRequest { count: 2 }.encode_to_vec());
    let reply = raw_grpc(server.addr, "/callbench.v1.Records/Download", request).await;
    assert_eq!(reply.grpc_status(), Some(0), "{reply:?}");
    let expected: Vec<u8> = (0..2).flat_map(|i| grpc_frame(&downloaded(i).encode_to_vec()).to_vec()).collect();
    assert_eq!(reply.body.to_vec(), expected);
}
