//! grpc.health.v1.Health and server reflection (v1 and v1alpha).

use crate::common;

use common::Server;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

#[tokio::test]
async fn the_server_and_every_contract_service_are_serving() {
    let server = Server::start();
    let mut client = HealthClient::new(server.channel().await);
    let services = callbench_contract::service_names();
    assert_eq!(services.len(), 6);
    for service in std::iter::once(String::new()).chain(services) {
        let reply = client.check(HealthCheckRequest { service: service.clone() }).await.expect("OK").into_inner();
        assert_eq!(reply.status(), ServingStatus::Serving, "{service:?}");
    }
    let status = client.check(HealthCheckRequest { service: "callbench.v1.Nope".into() }).await.expect_err("unknown");
    assert_eq!(status.code(), tonic::Code::NotFound);
}

/// The service names reflection v1 lists.
async fn list_v1(server: &Server) -> Vec<String> {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let mut client = ServerReflectionClient::new(server.channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies =
        client.server_reflection_info(futures_util::stream::iter([request])).await.expect("OK").into_inner();
    let reply = replies.message().await.expect("a reply").expect("one message");
    match reply.message_response {
        Some(MessageResponse::ListServicesResponse(list)) => list.service.into_iter().map(|s| s.name).collect(),
        other => panic!("not a service list: {other:?}"),
    }
}

async fn list_v1alpha(server: &Server) -> Vec<String> {
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest;

    let mut client = ServerReflectionClient::new(server.channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut replies =
        client.server_reflection_info(futures_util::stream::iter([request])).await.expect("OK").into_inner();
    let reply = replies.message().await.expect("a reply").expect("one message");
    match reply.message_response {
        Some(MessageResponse::ListServicesResponse(list)) => list.service.into_iter().map(|s| s.name).collect(),
        other => panic!("not a service list: {other:?}"),
    }
}

#[tokio::test]
async fn reflection_lists_every_service_in_both_versions() {
    let server = Server::start();
    for mut listed in [list_v1(&server).await, list_v1alpha(&server).await] {
        listed.sort();
        let mut expected = callbench_contract::service_names();
        expected.extend(
            [
                "grpc.health.v1.Health",
                "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection",
            ]
            .map(String::from),
        );
        expected.sort();
        assert_eq!(listed, expected);
    }
}
