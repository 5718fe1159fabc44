//! One error type for every workload, with its REST and gRPC meaning.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 400 / INVALID_ARGUMENT
    InvalidArgument,
    /// 404 / NOT_FOUND
    NotFound,
    /// 413 / RESOURCE_EXHAUSTED
    ResourceExhausted,
    /// 500 / INTERNAL (e.g. the users file cannot be read in per-request mode)
    Internal,
}

impl ErrorKind {
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::InvalidArgument => 400,
            ErrorKind::NotFound => 404,
            ErrorKind::ResourceExhausted => 413,
            ErrorKind::Internal => 500,
        }
    }

    /// The numeric gRPC status code.
    pub fn grpc_code(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => 3,
            ErrorKind::NotFound => 5,
            ErrorKind::ResourceExhausted => 8,
            ErrorKind::Internal => 13,
        }
    }

    /// The gRPC code's name, also used as `error.code` in REST error bodies.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorKind::Internal => "INTERNAL",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    pub kind: ErrorKind,
    pub message: String,
}

impl WorkloadError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::InvalidArgument, message: message.into() }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::NotFound, message: message.into() }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Internal, message: message.into() }
    }

    /// The REST error body every Rust server sends: `{"error": {"code", "message"}}`.
    pub fn to_json(&self) -> String {
        error_json(self.kind.name(), &self.message)
    }
}

/// `{"error": {"code": CODE, "message": MESSAGE}}`, for errors that do not come
/// from a workload (bad JSON, wrong content type, unknown route...).
pub fn error_json(code: &str, message: &str) -> String {
    serde_json::json!({ "error": { "code": code, "message": message } }).to_string()
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for WorkloadError {}

pub type Result<T> = std::result::Result<T, WorkloadError>;
