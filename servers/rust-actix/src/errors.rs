//! The contract's error responses: a status and `{"error": {"code", "message"}}`.

use actix_web::error::{JsonPayloadError, PathError, PayloadError};
use actix_web::http::header::{self, ContentType, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use callbench_workloads::error::{error_json, WorkloadError};
use std::fmt;

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &str, message: &str) -> Self {
        ApiError { status, body: error_json(code, message) }
    }

    fn bad_request(message: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", message)
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json")
    }

    /// 415 for a streamed upload that is not `application/x-ndjson`.
    pub fn not_ndjson() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "Content-Type must be application/x-ndjson",
        )
    }

    /// 400 for a payload that broke off or would not inflate.
    pub fn unreadable_body(message: &str) -> Self {
        Self::bad_request(&format!("cannot read the body: {message}"))
    }

    fn too_large(message: &str) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED", message)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.body)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status).content_type(ContentType::json()).body(self.body.clone())
    }
}

impl From<WorkloadError> for ApiError {
    fn from(err: WorkloadError) -> Self {
        let status = StatusCode::from_u16(err.kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiError { status, body: err.to_json() }
    }
}

impl From<JsonPayloadError> for ApiError {
    fn from(err: JsonPayloadError) -> Self {
        match err {
            JsonPayloadError::OverflowKnownLength { .. }
            | JsonPayloadError::Overflow { .. }
            | JsonPayloadError::Payload(PayloadError::Overflow) => Self::too_large(&err.to_string()),
            JsonPayloadError::ContentType => Self::unsupported_media_type(),
            // Syntax, types, missing fields, invalid UTF-8, a truncated body: all the client's doing.
            _ => Self::bad_request(&err.to_string()),
        }
    }
}

impl From<PathError> for ApiError {
    // actix answers a path that does not deserialize with 404; the contract wants 400.
    fn from(err: PathError) -> Self {
        Self::bad_request(&err.to_string())
    }
}

/// 404 for a path no route matches.
pub fn not_found() -> HttpResponse {
    ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route").error_response()
}

/// 405 with the contract's body and the `Allow` header actix's own 405 would carry.
pub fn method_not_allowed(allowed: &Method) -> HttpResponse {
    let mut response =
        ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "method not allowed").error_response();
    if let Ok(value) = HeaderValue::from_str(allowed.as_str()) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}
