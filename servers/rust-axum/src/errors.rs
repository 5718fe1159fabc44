//! The contract's error responses: a status and `{"error": {"code", "message"}}`.

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use callbench_workloads::error::{error_json, WorkloadError};

pub struct ApiError {
    status: StatusCode,
    body: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &str, message: &str) -> Self {
        ApiError { status, body: error_json(code, message) }
    }

    pub fn payload_too_large() -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED", "the request body is too large")
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

    /// 400 for a body that broke off or would not inflate.
    pub fn unreadable_body(message: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &format!("cannot read the body: {message}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], self.body).into_response()
    }
}

impl From<WorkloadError> for ApiError {
    fn from(err: WorkloadError) -> Self {
        let status = StatusCode::from_u16(err.kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiError { status, body: err.to_json() }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let message = rejection.body_text();
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => Self::new(StatusCode::PAYLOAD_TOO_LARGE, "RESOURCE_EXHAUSTED", &message),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::unsupported_media_type(),
            // axum says 422 for wrong types and missing fields; the contract says 400 for all bad JSON.
            _ => Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &message),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &rejection.body_text())
    }
}

/// Fallback for a path no route matches.
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route")
}

/// Fallback for a known path with another method; axum still adds the `Allow` header.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "method not allowed")
}
