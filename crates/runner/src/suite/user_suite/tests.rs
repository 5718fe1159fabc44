use super::*;
use crate::plan;
use std::path::PathBuf;

const SUITE: &str = r#"
name = "mine"
[[server]]
name = "orders-rest"
protocol = "rest"
start = ["./bin/orders", "--listen", "{host}:{port}"]
env = { MODE = "fast" }
tls = ["--tls"]

[[server]]
name = "orders-grpc"
protocol = "grpc"
url = "grpc://127.0.0.1:9090"
pids = [1]

[[call]]
name = "get-order"
rest = { path = "/v1/orders/7", headers = ["Accept: application/json"], status = [200] }
grpc = { method = "shop.Orders/GetOrder", message = '{"id": 7}', proto = ["orders.proto"], import_paths = ["protos"] }

[[experiment]]
id = "one"
title = "One at a time"
servers = ["orders-rest", "orders-rest+tls", "orders-grpc"]
workloads = ["get-order"]
"#;

fn parsed(text: &str) -> Result<Suite, String> {
    Suite::parse(text).map(|s| s.in_folder(Path::new("/work/mine"))).map_err(String::from)
}

fn with(extra: &str) -> String {
    format!("{SUITE}\n{extra}")
}

#[test]
fn a_started_server_is_a_manifest_run_in_the_suites_folder() {
    let suite = parsed(SUITE).unwrap();
    let manifests = suite.user_manifests();
    assert_eq!(manifests.len(), 1, "the server at a url is not started");
    let m = &manifests[0];
    assert_eq!(m.start.command, ["/work/mine/./bin/orders", "--listen", "{host}:{port}"]);
    assert_eq!(m.cwd.as_deref(), Some(Path::new("/work/mine")));
    assert_eq!(m.start.env["MODE"], "fast");
    assert_eq!(m.tls_args().unwrap(), ["--tls"]);
    assert!(m.calls_only && m.protocol == Protocol::Rest);
    let contract = parsed(&SUITE.replace("tls = [\"--tls\"]", "contract = true")).unwrap();
    assert!(!contract.user_manifests()[0].calls_only);
}

#[test]
fn a_call_is_a_rest_request_or_a_grpc_method_with_its_files_from_the_suites_folder() {
    let suite = parsed(SUITE).unwrap();
    let call = suite.call("get-order").unwrap();
    let rest = call.spec("http://127.0.0.1:8080/", Protocol::Rest).unwrap();
    assert_eq!(rest.target, "http://127.0.0.1:8080/v1/orders/7");
    assert_eq!(rest.headers, [("Accept".to_string(), "application/json".to_string())]);
    assert_eq!((rest.method.as_deref(), rest.expect_status.as_slice()), (None, &[200u16][..]));
    let grpc = call.spec("grpc://127.0.0.1:9090", Protocol::Grpc).unwrap();
    assert_eq!(grpc.target, "grpc://127.0.0.1:9090/shop.Orders/GetOrder");
    assert_eq!(grpc.data.as_deref(), Some(r#"{"id": 7}"#));
    assert_eq!(grpc.protos, [PathBuf::from("/work/mine/orders.proto")]);
    assert_eq!(grpc.import_paths, [PathBuf::from("/work/mine/protos")]);
}

#[test]
fn a_server_at_a_url_is_an_endpoint_per_call_on_loopback_unless_allowed() {
    let suite = parsed(SUITE).unwrap();
    let endpoints = suite.user_endpoints(false).unwrap();
    assert_eq!(endpoints.len(), 1);
    let e = &endpoints[0];
    assert_eq!(
        (e.label.as_str(), e.workload.as_str(), e.server_pids.as_slice()),
        ("orders-grpc", "get-order", &[1][..])
    );
    assert_eq!(e.spec.target, "grpc://127.0.0.1:9090/shop.Orders/GetOrder");
    let remote = parsed(&SUITE.replace("grpc://127.0.0.1:9090", "grpc://198.19.1.2:9090")).unwrap();
    let refused = remote.user_endpoints(false).unwrap_err();
    assert!(matches!(refused, CallError::NotLoopback { .. }) && refused.to_string().contains("--allow-remote"));
    assert!(remote.user_endpoints(true).unwrap()[0].spec.allow_remote);
}

#[test]
fn cells_of_a_started_server_carry_the_call_and_of_a_server_at_a_url_its_endpoint() {
    let mut suite = parsed(SUITE).unwrap();
    suite.endpoints = suite.user_endpoints(false).unwrap().into_iter().map(std::sync::Arc::new).collect();
    let cells = plan::cells(&suite, &suite.experiments[0]).unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["one/get-order/orders-rest", "one/get-order/orders-rest+tls", "one/get-order/orders-grpc"]);
    assert!(cells[0].call.is_some() && cells[0].endpoint.is_none());
    let addr = "127.0.0.1:8080".parse().unwrap();
    let spec = cells[1].load_spec(Some(addr), Protocol::Rest, None).unwrap();
    assert_eq!(spec.target, "https://127.0.0.1:8080/v1/orders/7");
    assert!(spec.insecure && spec.workload.is_none() && spec.duration.is_some());
    assert!(cells[2].call.is_none());
    assert_eq!(cells[2].endpoint.as_ref().unwrap().workload, "get-order");
}

#[test]
fn mistakes_are_one_line_each() {
    let cases = [
        (
            SUITE.replace("url = \"grpc://127.0.0.1:9090\"", "start = [\"x\"]\nurl = \"grpc://127.0.0.1:9090\""),
            "not both",
        ),
        (SUITE.replace("url = \"grpc://127.0.0.1:9090\"\npids = [1]", ""), "needs start"),
        (SUITE.replace("grpc://127.0.0.1:9090", "http://127.0.0.1:9090"), "grpc(s)://"),
        (SUITE.replace("env = { MODE = \"fast\" }", "pids = [3]"), "pids are for a server at a url"),
        (SUITE.replace("name = \"orders-grpc\"", "name = \"orders-rest\""), "two servers"),
        (SUITE.replace("rest = { path", "# rest = { path"), "no rest part for server 'orders-rest'"),
        (SUITE.replace("workloads = [\"get-order\"]", "workloads = [\"auth\"]"), "contract = true"),
        (with("[[call]]\nname = \"empty\""), "needs rest"),
        (SUITE.replace("\"orders-grpc\"]", "\"orders-grpc+tls\"]"), "runs at its url"),
        (with("[[call]]\nname = \"bad\"\nrest = { path = \"/\", headers = [\"no colon\"] }"), "call 'bad'"),
        (SUITE.replace("protocol = \"grpc\"", "protocol = \"soap\""), "soap"),
        (
            SUITE.replace("workloads = [\"get-order\"]", "workloads = [\"get-order\"]\nnetwork = { rtt = \"5ms\" }"),
            "behind a link",
        ),
    ];
    for (text, expected) in cases {
        let err = parsed(&text).unwrap_err();
        assert!(err.contains(expected) && !err.contains('\n'), "{expected}: {err}");
    }
    // A suite's own servers' calls may be split over a Ray cluster, as the built-in ones'.
    let split = SUITE.replace(
        "workloads = [\"get-order\"]",
        "workloads = [\"get-order\"]\nconcurrency = 4\ncluster = { ray = \"127.0.0.1:6379\", workers = 2 }",
    );
    assert!(parsed(&split).is_ok(), "{:?}", parsed(&split).err());
}

#[test]
fn a_contract_server_takes_the_built_in_workloads() {
    let text = SUITE.replace("tls = [\"--tls\"]", "contract = true").replace(
        "servers = [\"orders-rest\", \"orders-rest+tls\", \"orders-grpc\"]\nworkloads = [\"get-order\"]",
        "servers = [\"orders-rest\"]\nworkloads = [\"auth\", \"get-order\"]",
    );
    let suite = parsed(&text).unwrap();
    let cells = plan::cells(&suite, &suite.experiments[0]).unwrap();
    assert!(cells[0].call.is_none() && cells[1].call.is_some());
}
