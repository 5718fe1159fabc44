//! End-to-end: `callbench run` on a REST and gRPC twin none of us wrote, started by hand as a
//! user's service is: grpc-go's route_guide_server (gRPC) and, in front of it, grpc-gateway's
//! reverse proxy generated from a google.api.http rule for its GetFeature
//! (stock/grpc-gateway/, built by scripts/setup). Compared once by their URLs with `--server-pid`
//! (server CPU given: the REST side's is the gateway's and the gRPC server's behind it), and once by
//! `--call` from the rule with two points in turn (server CPU said to be missing).

use crate::common;

use common::{installed, Guard, Running, TempDir};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const POINT: &str = r#"{"latitude": 407838351, "longitude": -746143763}"#;
/// Four repetitions: the fewest whose interval can reach 95%, so that the answer can say which is ahead.
const QUICK: [&str; 7] = ["--repetitions", "4", "--duration", "60ms", "--warmup", "10ms", "-q"];

fn results(dir: &TempDir, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.path(name).join("results.json")).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("JSON");
    common::validate_results(&results);
    results
}

#[test]
fn a_grpc_gateway_and_its_grpc_server_are_compared_by_url_and_by_the_rule() {
    let route_guide = installed("~/go/bin/route_guide_server");
    let target = Path::new(common::callbench()).parent().and_then(Path::parent).unwrap().to_path_buf();
    let gateway = installed(&target.join("stock/grpc-gateway/grpc-gateway-route-guide").display().to_string());
    let (grpc_port, rest_port) = (common::free_port(), common::free_port());
    let quiet = |cmd: &mut Command| {
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    };
    let mut grpc_cmd = Command::new(route_guide);
    grpc_cmd.args(["-port", &grpc_port.to_string()]);
    quiet(&mut grpc_cmd);
    let grpc_server = Guard::spawn(&mut grpc_cmd);
    let grpc_addr = format!("127.0.0.1:{grpc_port}");
    assert!(common::wait_listening(&grpc_addr, Duration::from_secs(30)), "route_guide_server did not listen");
    let rest_addr = format!("127.0.0.1:{rest_port}");
    let mut rest_cmd = Command::new(gateway);
    rest_cmd.args(["-listen", &rest_addr, "-grpc", &grpc_addr]);
    quiet(&mut rest_cmd);
    let rest_server = Guard::spawn(&mut rest_cmd);
    assert!(common::wait_listening(&rest_addr, Duration::from_secs(30)), "the gateway did not listen");
    let proto_dir = format!(
        "{}/google.golang.org/grpc@v1.29.1/examples/route_guide/routeguide",
        String::from_utf8_lossy(&Command::new("go").args(["env", "GOMODCACHE"]).output().unwrap().stdout).trim()
    );
    let dir = TempDir::new("twin-stock");

    // By their URLs, as a user who knows both: the gateway's GET and the method, each server's pid.
    let rest = format!("http://{rest_addr}/v1/features/407838351/-746143763");
    let grpc = format!("grpc://{grpc_addr}/routeguide.RouteGuide/GetFeature");
    let proto = format!("{proto_dir}/route_guide.proto");
    // The REST side is the gateway and the gRPC server it calls: both its processes.
    let (rest_pid, grpc_pid) = (format!("{},{}", rest_server.id(), grpc_server.id()), grpc_server.id().to_string());
    let by_url = [
        "-X",
        "GET",
        &rest,
        &grpc,
        "--proto",
        &proto,
        "-I",
        &proto_dir,
        "-d",
        POINT,
        "--server-pid",
        &rest_pid,
        "--server-pid",
        &grpc_pid,
        "--out",
        &dir.str("urls"),
    ];
    let run = Running::command("run", &[&QUICK[..], &by_url[..]].concat()).finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    for file in ["results.json", "report.md", "report.html"] {
        assert!(dir.path("urls").join(file).exists(), "{file}");
    }
    let urls = results(&dir, "urls");
    let rest_pids = &urls["servers"][0]["endpoint"]["server_pids"];
    assert_eq!(rest_pids, &serde_json::json!([rest_server.id(), grpc_server.id()]), "{rest_pids}");
    for cell in urls["cells"].as_array().unwrap() {
        assert_eq!(cell["status"], "ok", "{cell:#}");
        assert!(cell["summary"]["server_cpu_us_per_call"]["median"].as_f64().is_some_and(|v| v > 0.0), "{cell:#}");
        assert!(cell["summary"]["throughput_per_s"]["lo"].as_f64().is_some(), "an interval: {}", cell["id"]);
    }
    // The answer's first question names both and which is ahead (or that no difference shows).
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("- One call at a time (call, "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(line.contains("REST ") && line.contains("gRPC "), "{line}");
    assert!(
        ["REST ahead", "gRPC ahead", "no significant difference"].iter().any(|v| line.contains(v)),
        "a verdict: {line}"
    );

    // From the rule: the REST requests derived from route_guide_http.proto's `get:` template, one
    // per point of an NDJSON file, in turn; no pids.
    let rule = common::repo().join("crates/cli/tests/e2e/stock/grpc-gateway/route_guide_http.proto");
    let points = dir.path("points.ndjson");
    std::fs::write(&points, format!("{POINT}\n{{\"latitude\": 408122808, \"longitude\": -743999179}}\n")).unwrap();
    let points = points.display().to_string();
    let rest_base = format!("http://{rest_addr}");
    let grpc_base = format!("grpc://{grpc_addr}");
    let rule_str = rule.display().to_string();
    let by_rule = [
        "--proto",
        &rule_str,
        "--call",
        "routeguide.RouteGuide/GetFeature",
        "--rest",
        &rest_base,
        "--grpc",
        &grpc_base,
        "--data-lines",
        &points,
        "--out",
        &dir.str("rule"),
    ];
    let run = Running::command("run", &[&QUICK[..], &by_rule[..]].concat()).finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    let rule = results(&dir, "rule");
    let servers = rule["servers"].as_array().unwrap();
    assert_eq!(servers[0]["endpoint"]["url"], rest_base.as_str(), "the --rest given");
    assert_eq!(servers[0]["endpoint"]["call"], "GET /v1/features/407838351/-746143763", "the first point's");
    for server in servers {
        let data = server["endpoint"]["data"].as_str().unwrap_or_default();
        assert!(data.starts_with("2 requests in turn from "), "{server:#}");
    }
    for cell in rule["cells"].as_array().unwrap() {
        assert_eq!(cell["status"], "ok", "{cell:#}");
        assert!(cell["summary"].get("server_cpu_us_per_call").is_none(), "{cell:#}");
    }
    assert!(run.stdout.contains("server CPU not measured: give --server-pid"), "{}", run.stdout);
}
