//! The records routes: `POST /records/batch` (one JSON body), `POST /records/upload` (NDJSON read
//! line by line as the body streams in, never held whole) and `GET /records?count=N` (NDJSON
//! lines written as they are made). The line reading and the `count` rule are serverkit's, shared
//! with rust-actix.

use crate::errors::ApiError;
use crate::extract::StrictJson;
use axum::body::{Body, BodyDataStream};
use axum::extract::{RawQuery, Request};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use callbench_serverkit::records::{count_param, is_ndjson, DownloadChunks, Upload, NDJSON};
use callbench_workloads::echo::EchoMessage;
use callbench_workloads::limits::MAX_BODY_BYTES;
use callbench_workloads::records::UploadSummary;
use futures_util::stream::{self, StreamExt};
use std::convert::Infallible;

/// The route whose body its handler reads as it comes (`whole_body` leaves it alone).
pub const UPLOAD_PATH: &str = "/records/upload";

pub async fn batch(StrictJson(message): StrictJson<EchoMessage>) -> Result<Json<UploadSummary>, ApiError> {
    Ok(Json(UploadSummary::of(&message.records)?))
}

pub async fn upload(request: Request) -> Response {
    let ndjson = is_ndjson(request.headers().get(header::CONTENT_TYPE).map(HeaderValue::as_bytes));
    let mut body = request.into_body().into_data_stream();
    if !ndjson {
        // Read (and dropped) up to the usual body limit, as every other route's body is.
        let drained = drain(&mut body, MAX_BODY_BYTES).await;
        return closing_unless(drained, ApiError::not_ndjson().into_response());
    }
    let mut upload = Upload::new();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) if upload.push(&chunk) => {}
            Ok(_) => break, // over a limit: the rest stays unread
            Err(e) => return closing_unless(false, ApiError::unreadable_body(&e.to_string()).into_response()),
        }
    }
    let read_whole = !upload.stopped_early();
    match upload.finish() {
        Ok(summary) => Json(summary).into_response(),
        Err(e) => closing_unless(read_whole, ApiError::from(e).into_response()),
    }
}

pub async fn download(RawQuery(query): RawQuery) -> Result<Response, ApiError> {
    let count = count_param(query.as_deref())?;
    let chunks = stream::iter(DownloadChunks::new(count).map(Ok::<_, Infallible>));
    Ok(([(header::CONTENT_TYPE, NDJSON)], Body::from_stream(chunks)).into_response())
}

/// Reads and drops the body up to `limit` bytes: whether it ended within them.
async fn drain(body: &mut BodyDataStream, limit: usize) -> bool {
    let mut read = 0;
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) if read + chunk.len() <= limit => read += chunk.len(),
            _ => return false,
        }
    }
    true
}

/// hyper ends a keep-alive connection whose request body was left unread without saying so
/// (see `whole_body.rs`): the answer says it.
fn closing_unless(read_whole: bool, mut answer: Response) -> Response {
    if !read_whole {
        answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    answer
}
