//! The contract's services: each handler converts the message, calls the
//! workload function and converts the answer back.
//!
//! The workloads run inline on the tokio worker, even per-request auth (which
//! reads the users file): `spawn_blocking` would add threads beyond `--workers`.

use crate::status::from_workload;
use callbench_contract::convert::cells_from_pb;
use callbench_contract::pb;
use callbench_workloads::auth::UserStore;
use callbench_workloads::{cars, echo, life, students};
use tonic::{Request, Response, Status};

pub struct AuthService {
    pub users: UserStore,
}

#[tonic::async_trait]
impl pb::auth_server::Auth for AuthService {
    async fn test(&self, request: Request<pb::AuthRequest>) -> Result<Response<pb::AuthResponse>, Status> {
        let pb::AuthRequest { id, password } = request.into_inner();
        let answer = self.users.test(id, &password).map_err(from_workload)?;
        Ok(Response::new(pb::AuthResponse { hash: answer.hash }))
    }
}

pub struct StudentsService;

#[tonic::async_trait]
impl pb::students_server::Students for StudentsService {
    async fn list(&self, _: Request<pb::ListStudentsRequest>) -> Result<Response<pb::ListStudentsResponse>, Status> {
        Ok(Response::new(students::list().into()))
    }
}

pub struct CarsService;

#[tonic::async_trait]
impl pb::cars_server::Cars for CarsService {
    async fn send(&self, request: Request<pb::CarMessage>) -> Result<Response<pb::CarMessage>, Status> {
        let message = cars::send(request.into_inner().into()).map_err(from_workload)?;
        Ok(Response::new(message.into()))
    }
}

pub struct LifeService;

#[tonic::async_trait]
impl pb::life_server::Life for LifeService {
    async fn setup(&self, _: Request<pb::SetupRequest>) -> Result<Response<pb::Board>, Status> {
        Ok(Response::new(life::setup().into()))
    }

    async fn step(&self, request: Request<pb::StepRequest>) -> Result<Response<pb::Board>, Status> {
        let request = request.into_inner();
        let board = life::step(&cells_from_pb(&request.board), request.ntimes).map_err(from_workload)?;
        Ok(Response::new(board.into()))
    }
}

pub struct EchoService;

#[tonic::async_trait]
impl pb::echo_server::Echo for EchoService {
    async fn echo(&self, request: Request<pb::EchoMessage>) -> Result<Response<pb::EchoMessage>, Status> {
        Ok(Response::new(echo_message(request.into_inner())?))
    }
}

/// Echo's check of one message, also the answer to each message of a `Records/Converse` call.
pub fn echo_message(message: pb::EchoMessage) -> Result<pb::EchoMessage, Status> {
    // An unknown enum number fails the conversion: INVALID_ARGUMENT, as the contract says.
    let message = echo::EchoMessage::try_from(message).map_err(from_workload)?;
    Ok(echo::echo(message).map_err(from_workload)?.into())
}
