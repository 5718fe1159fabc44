//! The standard gRPC services beside the contract: health and server reflection.

use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::ServingStatus;
use tonic_reflection::server::{v1, v1alpha, Builder, Error};

/// `grpc.health.v1.Health`: "" (the whole server, SERVING from the start) and
/// every `callbench.v1` service SERVING. Nothing ever turns them off: the server
/// either serves or has exited.
pub async fn health() -> HealthServer<impl Health> {
    let (reporter, server) = tonic_health::server::health_reporter();
    for name in callbench_contract::service_names() {
        reporter.set_service_status(name, ServingStatus::Serving).await;
    }
    server
}

/// Both reflection versions describe the same files, so `grpcurl list` shows
/// everything the server answers whichever version a client speaks.
fn reflection() -> Builder<'static> {
    Builder::configure()
        .register_encoded_file_descriptor_set(callbench_contract::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .include_reflection_service(false) // registered above, both versions
}

pub fn reflection_v1() -> Result<v1::ServerReflectionServer<impl v1::ServerReflection>, Error> {
    reflection().build_v1()
}

pub fn reflection_v1alpha() -> Result<v1alpha::ServerReflectionServer<impl v1alpha::ServerReflection>, Error> {
    reflection().build_v1alpha()
}
