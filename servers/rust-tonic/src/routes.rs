//! Every service the server answers, each with the same gzip and size settings.

use crate::records::RecordsService;
use crate::services::{AuthService, CarsService, EchoService, LifeService, StudentsService};
use crate::standard;
use callbench_contract::pb::{
    auth_server::AuthServer, cars_server::CarsServer, echo_server::EchoServer, life_server::LifeServer,
    records_server::RecordsServer, students_server::StudentsServer,
};
use callbench_workloads::auth::UserStore;
use callbench_workloads::limits::MAX_BODY_BYTES;
use tonic::codec::CompressionEncoding;
use tonic::service::Routes;

/// tonic's own limit, set to the contract's 4 MiB. tonic checks it twice:
/// - on the declared (wire) length, answering OUT_OF_RANGE; but the guard layer
///   in front has already refused every message over the same limit with
///   RESOURCE_EXHAUSTED, so that check never fires;
/// - on the decompressed size of a gzip message, answering RESOURCE_EXHAUSTED
///   ("size limit ... exceeded while decompressing"): a small gzip message
///   that inflates past 4 MiB is refused like an uncompressed one.
///
/// Both checks are `len > limit`, so a message of exactly 4 MiB passes.
pub const MAX_DECODED_BYTES: usize = MAX_BODY_BYTES;

/// gzip both ways (replies are compressed only when the client accepts gzip)
/// and the decoding limit above. A macro, as each generated server type has
/// its own inherent methods.
macro_rules! configured {
    ($server:expr) => {
        $server
            .accept_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_DECODED_BYTES)
    };
}

pub async fn routes(users: UserStore) -> Result<Routes, tonic_reflection::server::Error> {
    let mut routes = Routes::builder();
    routes
        .add_service(configured!(AuthServer::new(AuthService { users })))
        .add_service(configured!(StudentsServer::new(StudentsService)))
        .add_service(configured!(CarsServer::new(CarsService)))
        .add_service(configured!(LifeServer::new(LifeService)))
        .add_service(configured!(EchoServer::new(EchoService)))
        .add_service(configured!(RecordsServer::new(RecordsService)))
        .add_service(configured!(standard::health().await))
        .add_service(configured!(standard::reflection_v1()?))
        .add_service(configured!(standard::reflection_v1alpha()?));
    Ok(routes.routes())
}

/// `/package.Service/Method` of every contract method whose requests stream (for the guard).
pub fn streaming_request_paths() -> Vec<String> {
    let services = callbench_contract::descriptor_pool().services();
    let methods = services.flat_map(|service| service.methods().collect::<Vec<_>>());
    methods
        .filter(|m| m.is_client_streaming())
        .map(|m| format!("/{}/{}", m.parent_service().full_name(), m.name()))
        .collect()
}
