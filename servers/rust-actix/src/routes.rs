//! The contract's routes and their handlers: each one calls its workload function.

use crate::errors::{self, ApiError};
use crate::extract::StrictJson;
use crate::records;
use actix_web::http::header::ContentType;
use actix_web::http::Method;
use actix_web::{web, FromRequest, Handler, HttpResponse, Resource, Responder};
use callbench_workloads::auth::{AuthBody, AuthResponse, UserStore};
use callbench_workloads::cars::{self, CarMessage};
use callbench_workloads::echo::{self, EchoMessage};
use callbench_workloads::life::{self, Board, StepRequest};
use callbench_workloads::students::{self, ListStudentsResponse};

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PathConfig::default().error_handler(|err, _| ApiError::from(err).into()))
        .service(resource("/auth/{id}", Method::PUT, auth))
        .service(resource("/students", Method::GET, list_students))
        .service(resource("/cars", Method::POST, send_car))
        .service(resource("/life/setup", Method::GET, life_setup))
        .service(resource("/life/step", Method::POST, life_step))
        .service(resource("/echo", Method::POST, echo))
        .service(resource("/records/batch", Method::POST, records::batch))
        .service(resource("/records/upload", Method::POST, records::upload))
        .service(resource("/records", Method::GET, records::download))
        .service(resource("/health", Method::GET, health))
        .default_service(web::to(|| async { errors::not_found() }));
}

/// A path served by one method; any other method gets 405 (actix's own has no body).
fn resource<F, Args>(path: &str, method: Method, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    let allowed = method.clone();
    web::resource(path).route(web::method(method).to(handler)).default_service(web::to(move || {
        let response = errors::method_not_allowed(&allowed);
        async move { response }
    }))
}

async fn auth(
    users: web::Data<UserStore>,
    id: web::Path<i64>,
    StrictJson(body): StrictJson<AuthBody>,
) -> Result<web::Json<AuthResponse>, ApiError> {
    // Runs inline even in per-request mode (file read per call): the workers are the threads measured.
    Ok(web::Json(users.test(id.into_inner(), &body.password)?))
}

async fn list_students() -> web::Json<ListStudentsResponse> {
    web::Json(students::list())
}

async fn send_car(StrictJson(message): StrictJson<CarMessage>) -> Result<web::Json<CarMessage>, ApiError> {
    Ok(web::Json(cars::send(message)?))
}

async fn life_setup() -> web::Json<Board> {
    web::Json(life::setup())
}

async fn life_step(StrictJson(request): StrictJson<StepRequest>) -> Result<web::Json<Board>, ApiError> {
    Ok(web::Json(life::step(&request.board, request.ntimes)?))
}

async fn echo(StrictJson(message): StrictJson<EchoMessage>) -> Result<web::Json<EchoMessage>, ApiError> {
    Ok(web::Json(echo::echo(message)?))
}

async fn health() -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::json()).body(r#"{"status":"SERVING"}"#)
}
