//! The suite `callbench run URL…` runs on a user's endpoints: the default suite's questions —
//! one call at a time, 50 in flight, a fixed rate, a kept connection against a new one per call,
//! and 1 against 50 connections where every endpoint multiplexes — with its repetitions and
//! times, each endpoint a server and its call the one workload (so REST and gRPC are compared).

use super::{Suite, DEFAULT_SUITE};
use crate::endpoint::Endpoint;
use crate::RunError;
use std::sync::Arc;

/// The one workload of an endpoints run: each endpoint's own call.
const CALL: &str = "call";

/// What each experiment asks of a user's endpoints (the default suite's words speak of its servers).
const DESCRIPTIONS: [(&str, &str); 5] = [
    ("sequential", "What a single call costs end to end when nothing else is in flight."),
    (
        "closed-50",
        "Closed loop, 50 calls in flight. REST over HTTP/1.1 uses 50 connections; gRPC and HTTP/2 multiplex the 50 \
         calls on one connection, as most of their clients do.",
    ),
    (
        "fixed-rate",
        "Open loop at half of the lowest throughput measured with 50 calls in flight, latency counted from each \
         call's intended start (coordinated omission corrected).",
    ),
    ("connections", "50 calls in flight on 1 connection, or on 50: every endpoint here multiplexes its calls."),
    (
        "new-connection",
        "One call at a time on a connection kept across calls, and on a new connection per call: a new one also \
         pays the TCP connect (and the TLS handshake), each a round trip to the server, whatever the protocol.",
    ),
];

impl Suite {
    /// The default suite's questions on `endpoints` (probed: their protocols are known).
    pub fn for_endpoints(endpoints: Vec<Arc<Endpoint>>) -> Result<Suite, RunError> {
        let mut suite = Suite::parse(DEFAULT_SUITE)?;
        let labels: Vec<String> = endpoints.iter().map(|e| e.label.clone()).collect();
        let all_multiplex = endpoints.iter().all(|e| e.multiplexes());
        let cold = suite.experiments.iter().find(|e| e.id == "network").cloned();
        suite.experiments.retain(|e| match e.id.as_str() {
            "sequential" | "closed-50" | "fixed-rate" => true,
            "connections" => all_multiplex,
            _ => false,
        });
        if let Some(mut e) = cold {
            // The network question without the emulated link: the user's network is the one measured.
            e.id = "new-connection".into();
            e.title = "A kept connection, and a new one per call".into();
            e.answer = Some("A kept connection, and a new one per call".into());
            e.headline = Some("latency_p50_us".into());
            e.load.network = None;
            e.load.calls = None;
            e.optional = false;
            suite.experiments.push(e);
        }
        for e in &mut suite.experiments {
            e.servers = labels.clone();
            e.workloads = vec![CALL.into()];
            e.references.clear();
            e.seeds.clear();
            e.server_warmup = None;
            e.server_stall = None;
            e.description =
                DESCRIPTIONS.iter().find(|(id, _)| *id == e.id).map(|(_, d)| d.to_string()).unwrap_or_default();
        }
        suite.name = "endpoints".into();
        suite.description = "Your endpoints: one call at a time, 50 in flight, a fixed rate, a kept connection and a \
                             new one per call."
            .into();
        suite.endpoints = endpoints;
        suite.check().map_err(RunError::Settings)?;
        Ok(suite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use callbench_load::LoadSpec;

    fn endpoint(label: &str, url: &str) -> Arc<Endpoint> {
        Arc::new(Endpoint::new(label.into(), LoadSpec { target: url.into(), ..LoadSpec::default() }, vec![]))
    }

    #[test]
    fn the_default_questions_on_the_endpoints() {
        let suite = Suite::for_endpoints(vec![
            endpoint("rest", "http://127.0.0.1:9/students"),
            endpoint("grpc", "grpc://127.0.0.1:9/p.S/M"),
        ])
        .unwrap();
        let ids: Vec<&str> = suite.experiments.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["sequential", "closed-50", "fixed-rate", "new-connection"]);
        for e in &suite.experiments {
            assert_eq!(e.servers, ["rest", "grpc"], "{}", e.id);
            assert_eq!(e.workloads, [CALL], "{}", e.id);
            assert!(e.references.is_empty() && e.seeds.is_empty() && !e.description.is_empty(), "{}", e.id);
        }
        let cold = &suite.experiments[3];
        assert!(cold.load.network.is_none() && cold.load.calls.is_none() && cold.answer.is_some());
        assert_eq!(cold.sweep.as_ref().unwrap().param, "new_connection_per_call");
        assert_eq!(suite.experiments[2].load.rate.as_ref().unwrap().as_str(), Some("50% of closed-50"));
    }

    #[test]
    fn one_against_fifty_connections_only_where_every_endpoint_multiplexes() {
        let mut h2 = Endpoint::new(
            "rest".into(),
            LoadSpec { target: "http://127.0.0.1:9/s".into(), http2: true, ..LoadSpec::default() },
            vec![],
        );
        h2.call = "GET /s".into();
        let suite = Suite::for_endpoints(vec![Arc::new(h2), endpoint("grpc", "grpc://127.0.0.1:9/p.S/M")]).unwrap();
        assert!(suite.experiments.iter().any(|e| e.id == "connections"));
    }
}
