//! The records routes: `POST /records/batch` (one JSON body), `POST /records/upload` (NDJSON read
//! line by line as the payload streams in, never held whole) and `GET /records?count=N` (NDJSON
//! lines written as they are made). The line reading and the `count` rule are serverkit's, shared
//! with rust-axum.

use crate::errors::ApiError;
use crate::extract::StrictJson;
use actix_web::dev::Decompress;
use actix_web::http::{header, ConnectionType, Version};
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use callbench_serverkit::records::{count_param, is_ndjson, DownloadChunks, Upload, NDJSON};
use callbench_workloads::echo::EchoMessage;
use callbench_workloads::records::UploadSummary;
use futures_util::stream::{self, StreamExt};
use std::convert::Infallible;

pub async fn batch(StrictJson(message): StrictJson<EchoMessage>) -> Result<web::Json<UploadSummary>, ApiError> {
    Ok(web::Json(UploadSummary::of(&message.records)?))
}

pub async fn upload(request: HttpRequest, payload: web::Payload) -> HttpResponse {
    if !is_ndjson(request.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes())) {
        // The payload is left unread, as after any early answer of actix's (README: keep-alive).
        return ApiError::not_ndjson().error_response();
    }
    // Content-Encoding gzip undone as the payload comes, as actix's own extractors do.
    let mut body = Decompress::from_headers(payload.into_inner(), request.headers());
    let mut upload = Upload::new();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) if upload.push(&chunk) => {}
            Ok(_) => break, // over a limit: the rest stays unread
            Err(e) => return closing(ApiError::unreadable_body(&e.to_string()).error_response()),
        }
    }
    let read_whole = !upload.stopped_early();
    match upload.finish() {
        Ok(summary) => HttpResponse::Ok().json(summary),
        Err(e) if read_whole => ApiError::from(e).error_response(),
        Err(e) => closing(ApiError::from(e).error_response()),
    }
}

pub async fn download(request: HttpRequest) -> Result<HttpResponse, ApiError> {
    let count = count_param(Some(request.query_string()))?;
    let chunks = stream::iter(DownloadChunks::new(count).map(|chunk| Ok::<_, Infallible>(Bytes::from(chunk))));
    let mut answer = HttpResponse::Ok().content_type(NDJSON).streaming(chunks);
    if request.version() == Version::HTTP_10 {
        // actix would chunk it all the same, which HTTP/1.0 does not know: the answer ends
        // with the connection instead.
        answer.head_mut().no_chunking(true);
        answer.head_mut().set_connection_type(ConnectionType::Close);
    }
    Ok(answer)
}

/// The connection ends after this answer: the rest of the request is unread.
fn closing(mut answer: HttpResponse) -> HttpResponse {
    answer.head_mut().set_connection_type(ConnectionType::Close);
    answer
}
