//! Server reflection against the real rust-tonic server (built beforehand with
//! `cargo build --release --locked -p rust-tonic`), and against peers that
//! misbehave in ways no real server here does: no reflection, garbage, silence.

use crate::common;

use bytes::Bytes;
use callbench_dynproto::{
    connect_h2c, grpc_path, reflect, resolve, DynprotoError, ReflectionConn, ReflectionVersion, Source,
};
use callbench_transcode::{decode_response, encode_request, to_json};
use common::{unary_call, TonicServer};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const SECOND: Duration = Duration::from_secs(1);

async fn conn(addr: SocketAddr) -> ReflectionConn {
    connect_h2c(&addr.to_string(), 5 * SECOND).await.expect("connects")
}

#[tokio::test]
async fn auth_test_by_reflection_then_a_real_call() {
    let server = TonicServer::start();
    let method = resolve(&Source::Reflection, "callbench.v1.Auth/Test", Some(conn(server.addr).await))
        .await
        .expect("resolves by reflection");
    assert_eq!(method.input().full_name(), "callbench.v1.AuthRequest");
    let fields: Vec<String> = method.input().fields().map(|f| f.name().to_string()).collect();
    assert_eq!(fields, ["id", "password"]);
    assert_eq!(method.output().fields().map(|f| f.json_name().to_string()).collect::<Vec<_>>(), ["hash"]);

    let request = encode_request(&method, r#"{"id": 1, "password": "hunter2"}"#).expect("encodes");
    let (status, reply) = unary_call(server.addr, &grpc_path(&method), &request).await;
    assert_eq!(status, "0");
    let reply = decode_response(&method, &reply).expect("decodes");
    let hash = reply.get_field_by_name("hash").unwrap().as_str().unwrap().to_string();
    assert_eq!(hash.len(), 128);
    assert_eq!(to_json(&reply), format!(r#"{{"hash":"{hash}"}}"#));
}

#[tokio::test]
async fn life_step_by_reflection_steps_a_blinker() {
    let server = TonicServer::start();
    let method = resolve(&Source::Reflection, "callbench.v1.Life.Step", Some(conn(server.addr).await)).await.unwrap();
    let json = r#"{"ntimes": 1, "board": [{"x": 0, "y": 1}, {"x": 1, "y": 1}, {"x": 2, "y": 1}]}"#;
    let request = encode_request(&method, json).unwrap();
    let (status, reply) = unary_call(server.addr, &grpc_path(&method), &request).await;
    assert_eq!(status, "0");
    let reply = decode_response(&method, &reply).unwrap();
    assert_eq!(to_json(&reply), r#"{"board":[{"x":"1"},{"x":"1","y":"1"},{"x":"1","y":"2"}]}"#);
}

#[tokio::test]
async fn reflection_over_tls_on_the_callers_connection() {
    let server = TonicServer::start_with(&["--tls"]);
    let tls = common::tls::connect(server.addr).await;
    let connection = callbench_engine::h2pool::Connection::start(tls);
    connection.settled().await.expect("h2 over TLS");
    let conn = ReflectionConn::new(connection, format!("localhost:{}", server.addr.port()), "https");
    let method = resolve(&Source::Reflection, "callbench.v1.Auth/Test", Some(conn)).await.expect("resolves over TLS");
    assert_eq!(method.input().full_name(), "callbench.v1.AuthRequest");

    // Plaintext h2c to the TLS port: an error with a hint, quickly.
    let started = Instant::now();
    let err = match connect_h2c(&server.addr.to_string(), 5 * SECOND).await {
        Ok(conn) => resolve(&Source::Reflection, "callbench.v1.Auth/Test", Some(conn)).await.unwrap_err().to_string(),
        Err(err) => err.to_string(),
    };
    assert!(err.starts_with("reflection: ") || err.contains("TLS or not as expected"), "{err}");
    assert!(started.elapsed() < 5 * SECOND, "{err}");
}

#[tokio::test]
async fn v1alpha_alone_works_and_one_connection_serves_several_lookups() {
    let server = TonicServer::start();
    let mut alpha = conn(server.addr).await;
    alpha.versions = vec![ReflectionVersion::V1Alpha];
    let pool = reflect(alpha.clone(), "callbench.v1.Echo").await.expect("v1alpha answers");
    assert!(pool.get_message_by_name("callbench.v1.Record").is_some());
    let pool = reflect(alpha, "callbench.v1.Students").await.expect("the same connection again");
    assert!(pool.get_message_by_name("callbench.v1.Address").is_some());
}

#[tokio::test]
async fn unknown_services_and_methods_list_what_exists() {
    let server = TonicServer::start();
    let err = resolve(&Source::Reflection, "callbench.v1.Nope/Test", Some(conn(server.addr).await)).await.unwrap_err();
    assert!(matches!(err, DynprotoError::Method(_)), "the server's answer, not its reflection failing: {err:?}");
    let err = err.to_string();
    assert!(err.starts_with("service callbench.v1.Nope not found (services: callbench.v1.Auth, "), "{err}");
    assert!(err.contains("grpc.health.v1.Health"), "{err}");
    let err = resolve(&Source::Reflection, "callbench.v1.Auth/Nope", Some(conn(server.addr).await)).await.unwrap_err();
    assert_eq!(err, DynprotoError::Method("method Nope not found in callbench.v1.Auth (methods: Test)".into()));
    let err = resolve(&Source::Reflection, "callbench.v1.Auth/Test", None).await.unwrap_err();
    assert_eq!(err, DynprotoError::Connect("reflection needs a connection to the server".into()));
}

#[tokio::test]
async fn grpcurl_describes_the_same_input_message() {
    let grpcurl = std::path::Path::new(&std::env::var("HOME").unwrap_or_default()).join("go/bin/grpcurl");
    if !grpcurl.is_file() {
        eprintln!("skipped: {} is not installed (scripts/setup installs it)", grpcurl.display());
        return;
    }
    let server = TonicServer::start();
    for name in ["callbench.v1.Auth.Test", "callbench.v1.Life.Step", "callbench.v1.Students.List"] {
        let method = resolve(&Source::Reflection, name, Some(conn(server.addr).await)).await.unwrap();
        let output = tokio::process::Command::new(&grpcurl)
            .args(["-plaintext", &server.addr.to_string(), "describe", name])
            .output()
            .await
            .expect("grpcurl runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "grpcurl failed: {}", String::from_utf8_lossy(&output.stderr));
        let expected = format!(
            "rpc {} ( .{} ) returns ( .{} )",
            method.name(),
            method.input().full_name(),
            method.output().full_name()
        );
        assert!(text.contains(&expected), "grpcurl says {text:?}, we say {expected:?}");
    }
}

#[tokio::test]
async fn nothing_listening_is_a_quick_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let err = connect_h2c(&format!("127.0.0.1:{port}"), 5 * SECOND).await.unwrap_err();
    assert!(matches!(err, DynprotoError::Connect(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.starts_with(&format!("cannot connect to 127.0.0.1:{port}: ")), "{err}");
    assert!(started.elapsed() < 2 * SECOND);
}

#[tokio::test]
async fn an_http1_server_is_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = tcp.read(&mut buf).await;
            let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
        }
    });
    let started = Instant::now();
    let result = match connect_h2c(&addr.to_string(), 5 * SECOND).await {
        Ok(conn) => resolve(&Source::Reflection, "a.B/C", Some(conn)).await.map(|_| ()),
        Err(err) => Err(err),
    };
    let err = result.unwrap_err().to_string();
    assert!(!err.contains('\n'), "{err}");
    assert!(started.elapsed() < 5 * SECOND, "{err}");
}

/// What a fake peer does with each reflection stream.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Trailers-only grpc-status 12, as a server without reflection.
    Unimplemented,
    /// A well-framed message of junk bytes.
    Junk,
    /// A frame header announcing 4 GiB.
    HugeFrame,
    /// A message that is no FileDescriptorProto inside a valid reflection answer.
    BadDescriptor,
    /// Headers, then nothing.
    Silent,
}

/// An h2c server that answers every stream the same way; returns the paths it was asked.
async fn fake_server(behaviour: Behaviour) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let paths = Arc::new(Mutex::new(Vec::new()));
    let seen = paths.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(mut connection) = h2::server::handshake(tcp).await else { return };
                while let Some(Ok((request, mut respond))) = connection.accept().await {
                    seen.lock().unwrap().push(request.uri().path().to_string());
                    tokio::spawn(async move {
                        let _body = request.into_body(); // kept open until we are done
                        let ok = http::Response::builder().header("content-type", "application/grpc");
                        if let Behaviour::Unimplemented = behaviour {
                            let answer = ok.header("grpc-status", "12").body(()).unwrap();
                            let _ = respond.send_response(answer, true);
                            return;
                        }
                        let Ok(mut stream) = respond.send_response(ok.body(()).unwrap(), false) else { return };
                        let frame: Vec<u8> = match behaviour {
                            Behaviour::Junk => [&[0u8, 0, 0, 0, 6][..], &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]].concat(),
                            Behaviour::HugeFrame => vec![0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3],
                            // file_descriptor_response { file_descriptor_proto: [0xff 0xff] }
                            Behaviour::BadDescriptor => vec![0, 0, 0, 0, 6, 0x22, 4, 0x0a, 2, 0xff, 0xff],
                            _ => Vec::new(),
                        };
                        if !frame.is_empty() {
                            let _ = stream.send_data(Bytes::from(frame), false);
                        }
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    });
                }
            });
        }
    });
    (addr, paths)
}

#[tokio::test]
async fn without_reflection_both_versions_are_tried() {
    let (addr, paths) = fake_server(Behaviour::Unimplemented).await;
    let err = resolve(&Source::Reflection, "callbench.v1.Auth/Test", Some(conn(addr).await)).await.unwrap_err();
    assert_eq!(
        err,
        DynprotoError::Reflection(format!(
            "reflection: {addr} does not offer server reflection (grpc.reflection.v1.ServerReflection and \
             grpc.reflection.v1alpha.ServerReflection answered UNIMPLEMENTED)"
        ))
    );
    assert_eq!(
        *paths.lock().unwrap(),
        [
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
        ]
    );
}

#[tokio::test]
async fn garbage_and_silence_are_errors() {
    for (behaviour, expected) in [
        (Behaviour::Junk, "reflection: the server sent an undecodable answer: "),
        (Behaviour::HugeFrame, "reflection: the server announced a message of 4294967295 bytes"),
        (Behaviour::BadDescriptor, "reflection: the server sent a bad file descriptor: "),
        (Behaviour::Silent, "reflection: no complete answer from "),
    ] {
        let (addr, _) = fake_server(behaviour).await;
        let mut conn = conn(addr).await;
        conn.timeout = Duration::from_millis(500);
        let started = Instant::now();
        let err = resolve(&Source::Reflection, "a.B/C", Some(conn)).await.unwrap_err();
        assert!(matches!(err, DynprotoError::Reflection(_)), "{err:?}");
        let err = err.to_string();
        assert!(err.starts_with(expected), "{err}");
        assert!(started.elapsed() < 2 * SECOND, "{err}");
    }
}
