//! `StrictJson<T>`: a JSON request body as the contract wants it.
//!
//! actix's `web::Json` also takes `text/json` and any `+json` type, and its errors need
//! mapping anyway; this extractor uses the same `JsonBody` decoder with a strict media type.

use crate::errors::ApiError;
use actix_web::dev::{JsonBody, Payload};
use actix_web::{mime, FromRequest, HttpMessage, HttpRequest};
use callbench_workloads::limits::MAX_BODY_BYTES;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::pin::Pin;

pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for StrictJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if !is_json(req) {
            return Box::pin(async { Err(ApiError::unsupported_media_type()) });
        }
        // The media type is checked above, so JsonBody need not check it again.
        let body = JsonBody::<T>::new(req, payload, None, false).limit(MAX_BODY_BYTES);
        Box::pin(async move { body.await.map(StrictJson).map_err(ApiError::from) })
    }
}

/// `application/json`, parameters (charset...) allowed.
fn is_json(req: &HttpRequest) -> bool {
    matches!(req.mime_type(), Ok(Some(m))
        if m.type_() == mime::APPLICATION && m.subtype() == mime::JSON && m.suffix().is_none())
}
