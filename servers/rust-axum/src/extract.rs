//! axum's `Path` and `Json` extractors with the contract's rejections (axum's own give
//! 422 for bad JSON data and a plain-text body) and a strict JSON media type.

use crate::errors::ApiError;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts, HeaderMap};
use axum::Json;
use serde::de::DeserializeOwned;

/// A JSON request body: `Content-Type: application/json` (axum's `Json` also takes `+json` types).
pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for StrictJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers()) {
            return Err(ApiError::unsupported_media_type());
        }
        let Json(value) = Json::<T>::from_request(req, state).await?;
        Ok(StrictJson(value))
    }
}

/// A path parameter: 400 when it does not parse.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(value) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Path(value))
    }
}

/// `application/json`, parameters (charset...) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    let essence = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).and_then(|v| v.split(';').next());
    essence.is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
}
