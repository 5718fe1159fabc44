//! Server reflection as stock tools use it: grpcurl asks for the file containing a service, ghz
//! for the one containing a method (`package.Service.Method`), and both check the descriptors as
//! protobuf-go does. For the contract's services and the health service, each way must give the
//! service with the contract's methods and messages, in descriptors stock tools accept.

use crate::report::Outcome;
use callbench_dynproto::{connect_h2c, reflect, strict, ReflectionConn};
use std::net::SocketAddr;
use std::time::Duration;

const HEALTH: &str = "grpc.health.v1.Health";

/// One outcome per service.
pub(crate) async fn check_reflection(addr: SocketAddr) -> Vec<Outcome> {
    let mut services = callbench_contract::service_names();
    services.push(HEALTH.into());
    let conn = connect_h2c(&addr.to_string(), Duration::from_secs(5)).await;
    let mut outcomes = Vec::new();
    for service in services {
        let failure = match &conn {
            Ok(conn) => check_service(conn, &service).await.err(),
            Err(e) => Some(e.to_string()),
        };
        outcomes.push(Outcome { name: format!("reflection-{service}"), class: "ok".into(), failure });
    }
    outcomes
}

async fn check_service(conn: &ReflectionConn, service: &str) -> Result<(), String> {
    let pool = reflect(conn.clone(), service).await?;
    strict::check_pool(&pool).map_err(|e| format!("stock tools would refuse the descriptors: {e}"))?;
    let found = pool.get_service_by_name(service).ok_or_else(|| format!("the file sent has no service {service}"))?;
    if let Some(expected) = callbench_contract::descriptor_pool().get_service_by_name(service) {
        let shape = |s: &prost_reflect::ServiceDescriptor| -> Vec<String> {
            s.methods()
                .map(|m| format!("{}({}) -> {}", m.name(), m.input().full_name(), m.output().full_name()))
                .collect()
        };
        if shape(&found) != shape(&expected) {
            return Err(format!("reflection describes {:?}, the contract {:?}", shape(&found), shape(&expected)));
        }
    }
    for method in found.methods() {
        let symbol = method.full_name();
        let pool =
            reflect(conn.clone(), symbol).await.map_err(|e| format!("asked for method {symbol}, as ghz asks: {e}"))?;
        strict::check_pool(&pool).map_err(|e| format!("stock tools would refuse the descriptors: {e}"))?;
        if pool.get_service_by_name(service).is_none() {
            return Err(format!("asked for method {symbol}: the file sent has no service {service}"));
        }
    }
    Ok(())
}
