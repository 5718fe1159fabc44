//! The vectors again, through the clients that measure: the load engine's HTTP/1.1 client for REST
//! and its own HTTP/2 client for gRPC, judged by the same code as verify's own clients. A server
//! that passes both is known to answer the engine as the contract says, not only verify's client.
//! Two vectors ask for what the engine never sends (a body with no content type, a gRPC call with
//! another content type): they are counted as not sent, not judged.

use crate::check::{grpc_request, judge_grpc_reply, judge_grpc_status, judge_rest_body, output, rest_request};
use crate::VerifyError::{self, BadInput, Contract, Unreachable};
use callbench_contract::vectors::{GrpcCase, RestCase};
use callbench_engine::call_data::CallData;
use callbench_engine::grpc::{Grpc, GrpcCall, Pace, Shape};
use callbench_engine::http1::Http1;
use callbench_engine::net::Endpoint;
use callbench_engine::request::{BodyCheck, Expect, HttpRequest};
use callbench_engine::stats::error_name;
use callbench_engine::{ErrorKind, Outcome, Target};
use prost_reflect::DynamicMessage;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one vector's call may take through the engine.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// What the engine's client did with a vector.
pub enum Sent {
    Judged(Result<(), VerifyError>),
    /// The vector asks for a request the engine never makes.
    NotSendable(&'static str),
}

/// Why the body check failed, kept for the report (the engine only learns "validation").
#[derive(Clone, Default)]
struct Why(Arc<Mutex<Option<VerifyError>>>);

impl Why {
    fn set(&self, e: VerifyError) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }
    fn take(&self) -> VerifyError {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_else(|| {
            Contract("the answer did not decode, or its messages were not as many as expected".into())
        })
    }
}

fn endpoint(addr: SocketAddr, alpn: &[u8]) -> Result<Endpoint, VerifyError> {
    crate::dial::endpoint(addr, &[alpn]).map_err(|e| Unreachable(e.to_string()))
}

/// One call on a fresh connection of `target`.
async fn call_once<T: Target>(target: &T) -> Result<Outcome, VerifyError> {
    let mut conn =
        target.connect(0).await.map_err(|k| Unreachable(format!("cannot connect ({})", error_name(k))))?.conn;
    let reply = tokio::time::timeout(CALL_LIMIT, target.call(&mut conn))
        .await
        .map_err(|_| Unreachable(format!("no answer within {} s", CALL_LIMIT.as_secs())))?;
    Ok(reply.outcome)
}

/// `connect error`, `timeout error`...: a call that failed otherwise than by its answer's status or
/// body. No connection or answer is [`VerifyError::Unreachable`], a reset or broken protocol
/// breaks the contract.
fn failed(kind: ErrorKind) -> VerifyError {
    let message = format!("{} error", error_name(kind));
    match kind {
        ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Io => Unreachable(message),
        _ => Contract(message),
    }
}

pub(crate) async fn check_rest(addr: SocketAddr, case: &RestCase) -> Sent {
    let (headers, body) = match rest_request(case) {
        Ok(request) => request,
        Err(e) => return Sent::Judged(Err(e)),
    };
    if headers.iter().any(|(_, v)| v.is_empty()) {
        return Sent::NotSendable("a body without a content type (the engine sends application/json)");
    }
    Sent::Judged(rest(addr, case, headers, body).await)
}

async fn rest(
    addr: SocketAddr,
    case: &RestCase,
    headers: Vec<(String, String)>,
    body: bytes::Bytes,
) -> Result<(), VerifyError> {
    let why = Why::default();
    let check: BodyCheck = {
        let (case, why) = (case.clone(), why.clone());
        Box::new(move |body: &[u8]| judge_rest_body(&case, body).map_err(|e| why.set(e)).is_ok())
    };
    let request = HttpRequest { method: case.method.clone(), path: case.path.clone(), headers, body, gzip: false };
    let expect = Expect { status: vec![case.expect.status], body: Some(check) };
    let target = Http1::new(endpoint(addr, b"http/1.1")?, &request, expect, true);
    match call_once(&target).await? {
        Outcome::Ok => Ok(()),
        Outcome::Error(ErrorKind::HttpStatus(status)) => {
            Err(Contract(format!("status {status} (expected {})", case.expect.status)))
        }
        Outcome::Error(ErrorKind::Validation) => Err(why.take()),
        Outcome::Error(kind) => Err(failed(kind)),
    }
}

pub(crate) async fn check_grpc(addr: SocketAddr, case: &GrpcCase) -> Sent {
    if case.content_type.is_some() {
        return Sent::NotSendable("another content type than application/grpc");
    }
    Sent::Judged(grpc(addr, case).await)
}

/// A streaming vector goes as the engine sends a stream: a bidirectional one in ping-pong, each
/// message after the answer to the one before, so a server that waits for more input before it
/// answers fails; the engine checks the first answer message and counts them all.
async fn grpc(addr: SocketAddr, case: &GrpcCase) -> Result<(), VerifyError> {
    let (path, _, messages) = grpc_request(case)?;
    // A method the contract does not define (an unknown-route vector) is called as a unary one.
    let shape = crate::body::method(&case.method)
        .map_or(Shape::Unary, |m| Shape::of(m.is_client_streaming(), m.is_server_streaming()));
    let ok_messages = case.expect.messages.as_ref().filter(|_| case.expect.code == "OK");
    let first = case.expect.json.clone().or_else(|| ok_messages.and_then(|m| m.first().cloned()));
    let why = Why::default();
    let check: Option<BodyCheck> = first.map(|first| {
        let (mut case, why) = (case.clone(), why.clone());
        case.expect.json = Some(first);
        Box::new(move |bytes: &[u8]| {
            let judged = output(&case)
                .and_then(|d| {
                    DynamicMessage::decode(d, bytes).map_err(|e| Contract(format!("reply does not decode: {e}")))
                })
                .and_then(|got| judge_grpc_reply(&case, &got));
            judged.map_err(|e| why.set(e)).is_ok()
        }) as BodyCheck
    });
    let call = GrpcCall {
        messages: CallData::One(messages.iter().map(|m| m.to_vec()).collect()),
        check,
        shape,
        pace: if shape == Shape::Bidi { Pace::PingPong } else { Pace::Burst },
        expect_messages: ok_messages.map(|m| m.len() as u64),
        ..GrpcCall::unary(path, Vec::new())
    };
    let target = Grpc::new(endpoint(addr, b"h2")?, 1, false, call).map_err(|e| BadInput(e.to_string()))?;
    let code = match call_once(&target).await? {
        Outcome::Ok => Some(0),
        Outcome::Error(ErrorKind::GrpcStatus(code)) => Some(code),
        Outcome::Error(ErrorKind::Validation) => return Err(why.take()),
        Outcome::Error(ErrorKind::HttpStatus(status)) => {
            return judge_grpc_status(case, None, &format!("HTTP {status}")).map(drop)
        }
        Outcome::Error(kind) => return judge_grpc_status(case, None, &format!("{} error", error_name(kind))).map(drop),
    };
    // An OK answer's message was judged by the check (when the vector expects one).
    judge_grpc_status(case, code, "the engine keeps the code, not the message").map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_connection_or_answer_is_unreachable_a_broken_answer_breaks_the_contract() {
        assert_eq!(failed(ErrorKind::Timeout), Unreachable("timeout error".into()));
        assert_eq!(failed(ErrorKind::Connect), Unreachable("connect error".into()));
        assert_eq!(failed(ErrorKind::Reset(2)), Contract("reset_2 error".into()));
        assert_eq!(failed(ErrorKind::Protocol), Contract("protocol error".into()));
    }
}
