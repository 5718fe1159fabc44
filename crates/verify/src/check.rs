//! Runs one vector against a server and judges the answer.

use super::body::{grpc_bytes, message, method, rest_bytes};
use super::grpc::{code_name, GrpcConn};
use super::http1::Http1Conn;
use anyhow::{anyhow, bail, Result};
use bytes::Bytes;
use callbench_contract::rest_json::{message_from_proto_json, message_from_rest, message_to_rest, same_message};
use callbench_contract::vectors::{GrpcCase, RestCase};
use prost_reflect::DynamicMessage;
use std::net::SocketAddr;

/// Ok(()) when the server answered as the vector expects; Err says how it did not.
pub async fn check_rest(addr: SocketAddr, case: &RestCase) -> Result<()> {
    let mut conn = Http1Conn::connect(addr).await?;
    let (headers, body) = rest_request(case)?;
    let reply = conn.send(&case.method, &case.path, &headers, body).await?;
    judge_rest(case, reply.status, &reply.content_type, &reply.body)
}

/// Judges a REST answer, however it was obtained (callbench's client, curl...).
pub fn judge_rest(case: &RestCase, status: u16, content_type: &str, body: &[u8]) -> Result<()> {
    if status != case.expect.status {
        bail!("status {status} (expected {}); body: {}", case.expect.status, snippet(body));
    }
    if case.expect.json.is_some() && !content_type.starts_with("application/json") {
        bail!("content-type '{content_type}' (expected application/json)");
    }
    judge_rest_body(case, body)
}

/// Judges a REST answer's body (its status and content type aside).
pub fn judge_rest_body(case: &RestCase, body: &[u8]) -> Result<()> {
    let Some(expected) = &case.expect.json else { return Ok(()) };
    let got: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| anyhow!("body is not JSON ({e}): {}", snippet(body)))?;
    match &case.expect.message {
        Some(name) => {
            let desc = message(name)?;
            let want = message_from_rest(&desc, expected).map_err(|e| anyhow!("vector: {e}"))?;
            let got_message = message_from_rest(&desc, &got).map_err(|e| anyhow!("body is not a {name}: {e}"))?;
            compare(&want, &got_message)
        }
        None if &got != expected => bail!("body differs: got {}, expected {}", short(&got), short(expected)),
        None => Ok(()),
    }
}

/// Headers and body of a REST vector; JSON bodies get `Content-Type: application/json` unless overridden.
pub fn rest_request(case: &RestCase) -> Result<(Vec<(String, String)>, Bytes)> {
    let mut headers: Vec<(String, String)> = case.headers.iter().map(|(k, v)| (k.to_lowercase(), v.clone())).collect();
    let body = match &case.body {
        Some(body) => {
            let is_json = matches!(body, callbench_contract::vectors::Body::Json(_));
            if is_json && !headers.iter().any(|(k, _)| k == "content-type") {
                headers.push(("content-type".into(), "application/json".into()));
            }
            rest_bytes(body)?
        }
        None => Bytes::new(),
    };
    Ok((headers, body))
}

pub async fn check_grpc(addr: SocketAddr, case: &GrpcCase) -> Result<()> {
    let mut conn = GrpcConn::connect(addr).await?;
    let (path, content_type, message_bytes) = grpc_request(case)?;
    let reply = conn.call(&path, &content_type, &message_bytes).await?;
    let code = if reply.http_status == 200 { reply.code } else { None };
    if !judge_grpc_status(case, code, &format!("HTTP {} {}", reply.http_status, reply.message))? {
        return Ok(());
    }
    let body = reply.body.ok_or_else(|| anyhow!("OK without a (decodable, uncompressed) reply message"))?;
    let got = DynamicMessage::decode(output(case)?, body).map_err(|e| anyhow!("reply does not decode: {e}"))?;
    judge_grpc_reply(case, &got)
}

/// Judges a gRPC status (`None`: no grpc-status, e.g. an HTTP-level refusal). Ok(true) when
/// the reply message must be judged too.
pub fn judge_grpc_status(case: &GrpcCase, code: Option<i32>, detail: &str) -> Result<bool> {
    if case.expect.code == "ANY_ERROR" {
        if code == Some(0) {
            bail!("OK (expected an error status)");
        }
        return Ok(false);
    }
    let want = callbench_contract::grpc_status::code(&case.expect.code)
        .ok_or_else(|| anyhow!("vector: unknown code {}", case.expect.code))?;
    if code != Some(want) {
        let got = code.map(code_name).unwrap_or("no grpc-status");
        bail!("{got} (expected {}); {detail}", case.expect.code);
    }
    Ok(case.expect.json.is_some())
}

/// Judges a gRPC reply message against the vector's expected JSON.
pub fn judge_grpc_reply(case: &GrpcCase, got: &DynamicMessage) -> Result<()> {
    let Some(expected) = &case.expect.json else { return Ok(()) };
    let want = message_from_proto_json(&output(case)?, expected).map_err(|e| anyhow!("vector: {e}"))?;
    compare(&want, got)
}

/// The reply type of the vector's method.
pub fn output(case: &GrpcCase) -> Result<prost_reflect::MessageDescriptor> {
    Ok(method(&case.method).ok_or_else(|| anyhow!("vector: unknown method {}", case.method))?.output())
}

fn compare(want: &DynamicMessage, got: &DynamicMessage) -> Result<()> {
    if !same_message(want, got) {
        bail!("reply differs: got {}, expected {}", short(&message_to_rest(got)), short(&message_to_rest(want)));
    }
    Ok(())
}

/// Path, content type and message bytes of a gRPC vector.
pub fn grpc_request(case: &GrpcCase) -> Result<(String, String, Bytes)> {
    let input = method(&case.method).map(|m| m.input());
    let bytes = grpc_bytes(&case.request, input.as_ref())?;
    let content_type = case.content_type.clone().unwrap_or_else(|| "application/grpc".into());
    Ok((format!("/{}", case.method), content_type, bytes))
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]).to_string();
    if body.len() > 200 {
        format!("{text}...")
    } else {
        text
    }
}

fn short(value: &serde_json::Value) -> String {
    snippet(value.to_string().as_bytes())
}
