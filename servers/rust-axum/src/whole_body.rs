//! Every request body read whole before anything answers. hyper ends a keep-alive connection whose
//! request body was left unread when the answer went out, without saying `Connection: close`, so
//! the client's next request on it fails: with Python's http.client, 21 of 1500 `PUT /auth/abc`
//! with a JSON body (refused 400 on its path before the body was read) and 9 of 1500 text/plain
//! bodies (415) were each followed by a broken pipe. Bodies are small here: reading them first
//! costs a copy the JSON extractor makes anyway. The streamed upload (`POST /records/upload`, up to
//! 64 MiB) is the one body left to its handler, which reads it as it comes.

use crate::errors::ApiError;
use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use callbench_workloads::limits::MAX_BODY_BYTES;

pub async fn read_whole_body(request: Request, next: Next) -> Response {
    // A streamed upload is read as it comes, by its handler (records.rs), up to its own limits.
    if request.method() == Method::POST && request.uri().path() == crate::records::UPLOAD_PATH {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        // Past the limit (as sent: a gzip body is inflated and limited again inside): the rest is
        // left unread, so the connection ends, and the answer says so.
        Err(_) => {
            let mut answer = ApiError::payload_too_large().into_response();
            answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            answer
        }
    }
}
