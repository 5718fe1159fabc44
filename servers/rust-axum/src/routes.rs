//! The contract's routes and their handlers: each one calls its workload function.

use crate::errors::{self, ApiError};
use crate::extract::{Path, StrictJson};
use crate::records;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use callbench_workloads::auth::{AuthBody, AuthResponse, UserStore};
use callbench_workloads::cars::{self, CarMessage};
use callbench_workloads::echo::{self, EchoMessage};
use callbench_workloads::life::{self, Board, StepRequest};
use callbench_workloads::limits::MAX_BODY_BYTES;
use callbench_workloads::students::{self, ListStudentsResponse};
use std::sync::Arc;
use tower_http::compression::CompressionLayer;
use tower_http::decompression::RequestDecompressionLayer;

pub fn router(users: Arc<UserStore>) -> Router {
    Router::new()
        .route("/auth/{id}", put(auth))
        .route("/students", get(list_students))
        .route("/cars", post(send_car))
        .route("/life/setup", get(life_setup))
        .route("/life/step", post(life_step))
        .route("/echo", post(echo))
        .route("/records/batch", post(records::batch))
        .route(records::UPLOAD_PATH, post(records::upload))
        .route("/records", get(records::download))
        .route("/health", get(health))
        // Applies to the routes above, so it comes after them.
        .method_not_allowed_fallback(errors::method_not_allowed)
        .fallback(errors::not_found)
        // axum's default limit is 2 MB; the contract accepts up to 4 MiB.
        // The limit counts the bytes the handlers read: after gzip is undone, so a small body that
        // inflates past it is refused too.
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // gzip both ways, as the other servers: request bodies with Content-Encoding gzip are
        // inflated (another encoding gets 415), replies are gzipped when the client accepts it.
        .layer(RequestDecompressionLayer::new().gzip(true))
        .layer(CompressionLayer::new().gzip(true))
        // Every answer counted for callbench (CALLBENCH_ANSWERED_FILE), beside a load tool's claim;
        // and a pause now and then when CALLBENCH_STALL asks for one.
        .layer(axum::middleware::map_response(|answer: axum::response::Response| async move {
            callbench_serverkit::stall::maybe();
            callbench_serverkit::answered::count();
            answer
        }))
        // Outermost: the body is read whole before any of the above can answer (but for the
        // streamed upload's).
        .layer(axum::middleware::from_fn(crate::whole_body::read_whole_body))
        .with_state(users)
}

async fn auth(
    State(users): State<Arc<UserStore>>,
    Path(id): Path<i64>,
    StrictJson(body): StrictJson<AuthBody>,
) -> Result<Json<AuthResponse>, ApiError> {
    // Runs inline even in per-request mode (file read per call): the workers are the threads measured.
    Ok(Json(users.test(id, &body.password)?))
}

async fn list_students() -> Json<ListStudentsResponse> {
    Json(students::list())
}

async fn send_car(StrictJson(message): StrictJson<CarMessage>) -> Result<Json<CarMessage>, ApiError> {
    Ok(Json(cars::send(message)?))
}

async fn life_setup() -> Json<Board> {
    Json(life::setup())
}

async fn life_step(StrictJson(request): StrictJson<StepRequest>) -> Result<Json<Board>, ApiError> {
    Ok(Json(life::step(&request.board, request.ntimes)?))
}

async fn echo(StrictJson(message): StrictJson<EchoMessage>) -> Result<Json<EchoMessage>, ApiError> {
    Ok(Json(echo::echo(message)?))
}

async fn health() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], r#"{"status":"SERVING"}"#)
}
