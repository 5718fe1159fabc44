//! gzip both ways, as the contract asks of every server: a gzip request is inflated, a reply is
//! gzip-compressed when the client accepts it (and only then). Checked with an echo message of a
//! few KiB, above any sensible minimum size for compressing (Spring's default is 2 KiB).

use super::body::{message, method};
use super::grpc::{code_name, GrpcConn};
use super::http1::Http1Conn;
use super::report::Outcome;
use crate::error::chain;
use crate::VerifyError::{self, BadInput, Contract};
use bytes::Bytes;
use callbench_contract::rest_json::{message_from_rest, message_to_rest, same_message};
use callbench_launcher::manifest::Protocol;
use callbench_primitives::boxed::Boxed;
use prost::Message;
use prost_reflect::DynamicMessage;
use std::io::{Read, Write};
use std::net::SocketAddr;

/// The gzip checks of `protocol` against `addr`.
/// Boxed: compiled here once, not again in each crate that awaits it (callbench_primitives::boxed).
pub fn check_gzip(protocol: Protocol, addr: SocketAddr) -> Boxed<'static, Vec<Outcome>> {
    Box::pin(check_gzip_here(protocol, addr))
}

async fn check_gzip_here(protocol: Protocol, addr: SocketAddr) -> Vec<Outcome> {
    let checks: Vec<(&str, Result<(), VerifyError>)> = match protocol {
        Protocol::Rest => vec![
            ("gzip-request-inflated", rest(addr, true, false).await),
            ("gzip-reply-when-accepted", rest(addr, false, true).await),
        ],
        Protocol::Grpc => vec![
            ("gzip-request-inflated", grpc(addr, true, false).await),
            ("gzip-reply-when-accepted", grpc(addr, false, true).await),
        ],
        // Bytes back as they came: there is no encoding to negotiate.
        Protocol::Raw => vec![],
    };
    checks
        .into_iter()
        .map(|(name, r)| Outcome { name: name.into(), class: "gzip".into(), failure: r.err().map(|e| e.to_string()) })
        .collect()
}

/// An echo message of about 6 KiB that compresses well.
fn echo_json() -> serde_json::Value {
    let records: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            serde_json::json!({
                "id": i, "name": format!("record number {i} of the gzip check"), "score": i as f64 / 4.0,
                "active": i % 2 == 0, "kind": "KIND_MEDIUM",
                "location": {"city": "Madison", "latitude": 43.07, "longitude": -89.4},
                "tags": ["alpha", "beta"], "samples": [i, i + 1, i + 2]
            })
        })
        .collect();
    serde_json::json!({ "records": records })
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

fn gunzip(data: &[u8]) -> Result<Vec<u8>, VerifyError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .take(16 << 20)
        .read_to_end(&mut out)
        .map_err(|e| Contract(format!("not gzip: {e}")))?;
    Ok(out)
}

fn expect_echo(got: &DynamicMessage) -> Result<(), VerifyError> {
    let want =
        message_from_rest(&message("callbench.v1.EchoMessage")?, &echo_json()).map_err(|e| BadInput(e.to_string()))?;
    if !same_message(&want, got) {
        let text = message_to_rest(got).to_string();
        return Err(Contract(format!("the echo differs from what was sent: {}", &text[..text.len().min(200)])));
    }
    Ok(())
}

async fn rest(addr: SocketAddr, compress_request: bool, accept: bool) -> Result<(), VerifyError> {
    let json = serde_json::to_vec(&echo_json()).map_err(|e| BadInput(chain(&e)))?;
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    let body = if compress_request {
        headers.push(("content-encoding".into(), "gzip".into()));
        Bytes::from(gzip(&json))
    } else {
        Bytes::from(json)
    };
    if accept {
        headers.push(("accept-encoding".into(), "gzip".into()));
    }
    let reply = Http1Conn::connect(addr).await?.send("POST", "/echo", &headers, body).await?;
    if reply.status != 200 {
        return Err(Contract(format!("POST /echo answered {}", reply.status)));
    }
    let gzipped = reply.content_encoding.eq_ignore_ascii_case("gzip");
    match (accept, gzipped) {
        (true, false) => {
            return Err(Contract("the client accepted gzip but the ~6 KiB reply was not compressed".into()))
        }
        (false, true) => {
            return Err(Contract("the reply was gzip-compressed although the client did not accept it".into()))
        }
        _ => {}
    }
    let body = if gzipped { gunzip(&reply.body)? } else { reply.body.to_vec() };
    let value: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| Contract(format!("reply is not JSON: {e}")))?;
    let got = message_from_rest(&message("callbench.v1.EchoMessage")?, &value).map_err(|e| Contract(e.to_string()))?;
    expect_echo(&got)
}

async fn grpc(addr: SocketAddr, compress_request: bool, accept: bool) -> Result<(), VerifyError> {
    let echo = method("callbench.v1.Echo/Echo").ok_or_else(|| BadInput("no Echo method".into()))?;
    let request = message_from_rest(&echo.input(), &echo_json()).map_err(|e| BadInput(e.to_string()))?.encode_to_vec();
    let mut headers = Vec::new();
    let payload = if compress_request {
        headers.push(("grpc-encoding", "gzip"));
        gzip(&request)
    } else {
        request
    };
    if accept {
        headers.push(("grpc-accept-encoding", "gzip"));
    }
    let mut conn = GrpcConn::connect(addr).await?;
    let reply =
        conn.call_with("/callbench.v1.Echo/Echo", "application/grpc", &payload, compress_request, &headers).await?;
    if reply.http_status != 200 || reply.code != Some(0) {
        let code = reply.code.map(code_name).unwrap_or("no grpc-status");
        return Err(Contract(format!("Echo answered HTTP {} {code} {}", reply.http_status, reply.message)));
    }
    let (compressed, bytes) = reply.raw_message.ok_or_else(|| Contract("OK without a reply message".into()))?;
    match (accept, compressed) {
        (true, false) => {
            return Err(Contract("the client accepted gzip but the ~6 KiB reply was not compressed".into()))
        }
        (false, true) => {
            return Err(Contract("the reply was compressed although the client accepted no encoding".into()))
        }
        _ => {}
    }
    let bytes = if compressed {
        if !reply.encoding.eq_ignore_ascii_case("gzip") {
            return Err(Contract(format!("a compressed reply with grpc-encoding '{}'", reply.encoding)));
        }
        gunzip(&bytes)?
    } else {
        bytes.to_vec()
    };
    let got = DynamicMessage::decode(echo.output(), bytes.as_slice())
        .map_err(|e| Contract(format!("reply does not decode: {e}")))?;
    expect_echo(&got)
}
