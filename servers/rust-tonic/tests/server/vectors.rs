//! Every gRPC vector of `contract/vectors/*.json`, judged by the same code as `callbench verify`.

use crate::common;

use callbench_launcher::manifest::Protocol;
use callbench_verify::run_vectors;
use common::Server;

#[tokio::test]
async fn every_grpc_vector_passes() {
    let server = Server::start();
    let outcomes = run_vectors(Protocol::Grpc, server.addr, None).await;
    let failures: Vec<String> =
        outcomes.iter().filter_map(|o| o.failure.as_ref().map(|f| format!("{}: {f}", o.name))).collect();
    assert!(outcomes.len() > 50, "only {} vectors ran", outcomes.len());
    assert!(failures.is_empty(), "{} of {} vectors failed:\n{}", failures.len(), outcomes.len(), failures.join("\n"));
}
