//! Runs one vector against a server and judges the answer.

use super::body::{grpc_bytes, message, method, rest_bytes, rest_pieces};
use super::grpc::{code_name, GrpcConn};
use super::http1::{Http1Conn, Pieces};
use crate::VerifyError::{self, BadInput, Contract};
use bytes::Bytes;
use callbench_contract::ndjson::{self, NdjsonError};
use callbench_contract::rest_json::{message_from_proto_json, message_from_rest, message_to_rest, same_message};
use callbench_contract::vectors::{Body, GrpcCase, RestCase};
use prost_reflect::DynamicMessage;
use std::net::SocketAddr;

/// Ok(()) when the server answered as the vector expects; Err says how it did not.
pub(crate) async fn check_rest(addr: SocketAddr, case: &RestCase) -> Result<(), VerifyError> {
    let mut conn = Http1Conn::connect(addr).await?;
    let (headers, body) = rest_request(case)?;
    let body = match &case.body {
        Some(ndjson @ Body::Ndjson(_)) => Pieces::chunked(rest_pieces(ndjson)?),
        _ => Pieces::whole(body),
    };
    let reply = conn.send_body(&case.method, &case.path, &headers, body).await?;
    judge_rest(case, reply.status, &reply.content_type, &reply.body)
}

/// Judges a REST answer, however it was obtained (callbench's client, curl...): an answer the
/// vector does not expect is [`VerifyError::Contract`], a vector the contract cannot read
/// [`VerifyError::BadInput`].
pub fn judge_rest(case: &RestCase, status: u16, content_type: &str, body: &[u8]) -> Result<(), VerifyError> {
    if status != case.expect.status {
        return Err(Contract(format!("status {status} (expected {}); body: {}", case.expect.status, snippet(body))));
    }
    if case.expect.json.is_some() && !content_type.starts_with("application/json") {
        return Err(Contract(format!("content-type '{content_type}' (expected application/json)")));
    }
    if case.expect.ndjson.is_some() && !content_type.starts_with("application/x-ndjson") {
        return Err(Contract(format!("content-type '{content_type}' (expected application/x-ndjson)")));
    }
    judge_rest_body(case, body)
}

/// Judges a REST answer's body (its status and content type aside).
pub(crate) fn judge_rest_body(case: &RestCase, body: &[u8]) -> Result<(), VerifyError> {
    if let Some(lines) = &case.expect.ndjson {
        return judge_ndjson(case, lines, body);
    }
    let Some(expected) = &case.expect.json else { return Ok(()) };
    let got: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| Contract(format!("body is not JSON ({e}): {}", snippet(body))))?;
    match &case.expect.message {
        Some(name) => {
            let desc = message(name)?;
            let want = message_from_rest(&desc, expected).map_err(|e| BadInput(format!("vector: {e}")))?;
            let got_message =
                message_from_rest(&desc, &got).map_err(|e| Contract(format!("body is not a {name}: {e}")))?;
            compare(&want, &got_message)
        }
        None if &got != expected => {
            Err(Contract(format!("body differs: got {}, expected {}", short(&got), short(expected))))
        }
        None => Ok(()),
    }
}

/// A streamed answer: one JSON value a line, every line ending in a newline, each the expected
/// line's message (the contract's checker, `callbench_contract::ndjson`).
fn judge_ndjson(case: &RestCase, expected: &[serde_json::Value], body: &[u8]) -> Result<(), VerifyError> {
    let name =
        case.expect.message.as_deref().ok_or_else(|| BadInput("vector: ndjson without a message type".into()))?;
    let desc = message(name)?;
    let want = expected
        .iter()
        .map(|v| message_from_rest(&desc, v).map_err(|e| BadInput(format!("vector: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    ndjson::check(&desc, &want, body).or_else(|e| match e {
        NdjsonError::Differs { line, want, got } => {
            compare(&want, &got).map_err(|e| Contract(format!("line {line}: {e}")))
        }
        NdjsonError::Unterminated => {
            Err(Contract(format!("{e}: ...{}", snippet(&body[body.len().saturating_sub(200)..]))))
        }
        NdjsonError::LineCount { .. } => Err(Contract(format!("{e}: {}", snippet(body)))),
        NdjsonError::NotJson { line, .. } => {
            let text = ndjson::lines(body).ok().and_then(|l| l.get(line - 1).copied()).unwrap_or_default();
            Err(Contract(format!("{e}: {}", snippet(text))))
        }
        e => Err(Contract(format!("{e}"))),
    })
}

/// Headers and body of a REST vector; JSON bodies get `Content-Type: application/json` unless
/// overridden. A body the vector gives badly (bad base64) is [`VerifyError::BadInput`].
pub fn rest_request(case: &RestCase) -> Result<(Vec<(String, String)>, Bytes), VerifyError> {
    let mut headers: Vec<(String, String)> = case.headers.iter().map(|(k, v)| (k.to_lowercase(), v.clone())).collect();
    let body = match &case.body {
        Some(body) => {
            let default_type = match body {
                Body::Json(_) => Some("application/json"),
                Body::Ndjson(_) => Some("application/x-ndjson"),
                _ => None,
            };
            if let Some(default_type) = default_type.filter(|_| !headers.iter().any(|(k, _)| k == "content-type")) {
                headers.push(("content-type".into(), default_type.into()));
            }
            rest_bytes(body)?
        }
        None => Bytes::new(),
    };
    Ok((headers, body))
}

pub(crate) async fn check_grpc(addr: SocketAddr, case: &GrpcCase) -> Result<(), VerifyError> {
    let mut conn = GrpcConn::connect(addr).await?;
    let (path, content_type, messages) = grpc_request(case)?;
    let reply = conn.call_stream(&path, &content_type, &messages).await?;
    let code = if reply.http_status == 200 { reply.code } else { None };
    if !judge_grpc_status(case, code, &format!("HTTP {} {}", reply.http_status, reply.message))? {
        return Ok(());
    }
    if let Some(expected) = &case.expect.messages {
        judge_grpc_messages(case, expected, &reply.messages)?;
    }
    if case.expect.json.is_none() {
        return Ok(());
    }
    let body = reply.body.ok_or_else(|| Contract("OK without a (decodable, uncompressed) reply message".into()))?;
    let got =
        DynamicMessage::decode(output(case)?, body).map_err(|e| Contract(format!("reply does not decode: {e}")))?;
    judge_grpc_reply(case, &got)
}

/// Decodes every message of a streamed answer and judges them against the vector's.
fn judge_grpc_messages(
    case: &GrpcCase,
    expected: &[serde_json::Value],
    got: &[(bool, Bytes)],
) -> Result<(), VerifyError> {
    let output = output(case)?;
    let mut decoded = Vec::with_capacity(got.len());
    for (i, (compressed, bytes)) in got.iter().enumerate() {
        if *compressed {
            return Err(Contract(format!("answer message {} is compressed, though the call did not accept it", i + 1)));
        }
        let message = DynamicMessage::decode(output.clone(), bytes.clone())
            .map_err(|e| Contract(format!("answer message {} does not decode: {e}", i + 1)))?;
        decoded.push(message);
    }
    judge_grpc_stream(case, expected, &decoded)
}

/// Judges the messages of a streamed answer, however they were obtained: as many as expected, each
/// the expected one, in order.
pub fn judge_grpc_stream(
    case: &GrpcCase,
    expected: &[serde_json::Value],
    got: &[DynamicMessage],
) -> Result<(), VerifyError> {
    if got.len() != expected.len() {
        return Err(Contract(format!("{} answer messages (expected {})", got.len(), expected.len())));
    }
    let output = output(case)?;
    for (i, (got, want)) in got.iter().zip(expected).enumerate() {
        let want = message_from_proto_json(&output, want).map_err(|e| BadInput(format!("vector: {e}")))?;
        compare(&want, got).map_err(|e| Contract(format!("answer message {}: {e}", i + 1)))?;
    }
    Ok(())
}

/// Judges a gRPC status (`None`: no grpc-status, e.g. an HTTP-level refusal). Ok(true) when
/// the reply message must be judged too.
pub fn judge_grpc_status(case: &GrpcCase, code: Option<i32>, detail: &str) -> Result<bool, VerifyError> {
    if case.expect.code == "ANY_ERROR" {
        if code == Some(0) {
            return Err(Contract("OK (expected an error status)".into()));
        }
        return Ok(false);
    }
    let want = callbench_contract::grpc_status::code(&case.expect.code)
        .ok_or_else(|| BadInput(format!("vector: unknown code {}", case.expect.code)))?;
    if code != Some(want) {
        let got = code.map(code_name).unwrap_or("no grpc-status");
        return Err(Contract(format!("{got} (expected {}); {detail}", case.expect.code)));
    }
    Ok(case.expect.json.is_some() || case.expect.messages.is_some())
}

/// Judges a gRPC reply message against the vector's expected JSON.
pub fn judge_grpc_reply(case: &GrpcCase, got: &DynamicMessage) -> Result<(), VerifyError> {
    let Some(expected) = &case.expect.json else { return Ok(()) };
    let want = message_from_proto_json(&output(case)?, expected).map_err(|e| BadInput(format!("vector: {e}")))?;
    compare(&want, got)
}

/// The reply type of the vector's method.
pub fn output(case: &GrpcCase) -> Result<prost_reflect::MessageDescriptor, VerifyError> {
    Ok(method(&case.method).ok_or_else(|| BadInput(format!("vector: unknown method {}", case.method)))?.output())
}

fn compare(want: &DynamicMessage, got: &DynamicMessage) -> Result<(), VerifyError> {
    if !same_message(want, got) {
        let (got, want) = (short(&message_to_rest(got)), short(&message_to_rest(want)));
        return Err(Contract(format!("reply differs: got {got}, expected {want}")));
    }
    Ok(())
}

/// Path, content type and request messages of a gRPC vector (a body it gives badly:
/// [`VerifyError::BadInput`]).
pub(crate) fn grpc_request(case: &GrpcCase) -> Result<(String, String, Vec<Bytes>), VerifyError> {
    let input = method(&case.method).map(|m| m.input());
    let messages = case.bodies().into_iter().map(|b| grpc_bytes(b, input.as_ref())).collect::<Result<_, _>>()?;
    let content_type = case.content_type.clone().unwrap_or_else(|| "application/grpc".into());
    Ok((format!("/{}", case.method), content_type, messages))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(code: &str) -> GrpcCase {
        serde_json::from_value(serde_json::json!({"method": "callbench.v1.Echo/Echo", "expect": {"code": code}}))
            .unwrap()
    }

    #[test]
    fn a_wrong_answer_breaks_the_contract_a_broken_vector_is_bad_input() {
        assert_eq!(judge_grpc_status(&case("OK"), Some(0), ""), Ok(false));
        let wrong = judge_grpc_status(&case("OK"), Some(5), "HTTP 200 ").unwrap_err();
        assert_eq!(wrong, Contract("NOT_FOUND (expected OK); HTTP 200 ".into()));
        let any = judge_grpc_status(&case("ANY_ERROR"), Some(0), "").unwrap_err();
        assert!(matches!(any, Contract(_)), "{any:?}");
        let broken = judge_grpc_status(&case("NO_SUCH_CODE"), Some(0), "").unwrap_err();
        assert_eq!(broken, BadInput("vector: unknown code NO_SUCH_CODE".into()));
        let mut no_method = case("OK");
        no_method.method = "x.Y/Z".into();
        assert!(matches!(output(&no_method), Err(BadInput(_))));
    }
}
