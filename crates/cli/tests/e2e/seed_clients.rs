//! End-to-end: seed 000's own clients (clients/) across an emulated link with TLS and a name
//! server on the far side (`callbench serve --tls --dns --pcap`): the tonic client as the article
//! wrote it and the REST call as VS Code's REST Client would have made it, each call decomposed
//! from its packets into lookup, connect, handshake and call (root needed, as for every link); and
//! the same clients through a TLS-terminating front end on the far side (`serve --front`).

use crate::common;

use common::run_cmd;
use serde_json::Value;
use std::process::Command;

const RTT_MS: f64 = 20.0;

/// `serve NAME --tls --dns --network rtt=20ms --pcap F -- sh -c SCRIPT`: the script's stdout and
/// the phases of its packets.
fn across(server: &str, script: &str) -> (String, Value) {
    let (stdout, _, phases) = across_with(server, &[], script);
    (stdout, phases)
}

/// [`across`] with more arguments for serve (`--front …`); its stderr too.
fn across_with(server: &str, more: &[&str], script: &str) -> (String, String, Value) {
    let dir = common::TempDir::new("seed-clients");
    let pcap = dir.str("run.pcap");
    let args = ["serve", server, "--no-build", "--tls", "--dns", "--network", "rtt=20ms", "--pcap", &pcap];
    let run = run_cmd(Command::new(common::callbench()).args(args).args(more).args(["--", "sh", "-c", script]));
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert!(run.stderr.contains("server.callbench.test resolves to 198.18.0.2"), "{}", run.all());
    let read = run_cmd(Command::new(common::callbench()).args(["phases", &pcap, "-o", "json"]));
    assert_eq!(read.code, Some(0), "{}", read.all());
    (run.stdout, run.stderr, serde_json::from_str(&read.stdout).unwrap_or_else(|e| panic!("{e}: {}", read.all())))
}

fn trips(us: &Value) -> i64 {
    (us.as_f64().unwrap_or_else(|| panic!("no phase: {us}")) / (RTT_MS * 1000.0)).round() as i64
}

/// Every call a client printed (`{"us": …, "ok": true}` lines) succeeded; their times in round trips.
fn calls_in_trips(stdout: &str, count: usize) -> Vec<f64> {
    let lines: Vec<Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines.len(), count, "{stdout}");
    assert!(lines.iter().all(|l| l["ok"] == true), "{stdout}");
    lines.iter().map(|l| l["us"].as_f64().unwrap() / (RTT_MS * 1000.0)).collect()
}

/// The client's own clock: no call faster than its four round trips, and the middle one within two
/// more (the client's and server's CPU; a fresh process's first call also loads its code).
fn assert_clock_agrees(stdout: &str, count: usize) {
    let mut t = calls_in_trips(stdout, count);
    assert!(t.iter().all(|t| *t >= 3.9), "{t:?} round trips: {stdout}");
    t.sort_by(f64::total_cmp);
    assert!(t[count / 2] < 6.0, "{t:?} round trips: {stdout}");
}

/// Each connection: a lookup across the link, a connect, a TLS 1.3 handshake and the call, one
/// round trip each.
fn assert_four_round_trips(phases: &Value, calls: usize) {
    let connections = phases["connections"].as_array().unwrap();
    assert_eq!(connections.len(), calls, "a connection per call: {phases:#}");
    for c in connections {
        assert_eq!(trips(&c["dns_us"]), 1, "the lookup crossed the link: {c:#}");
        assert_eq!(trips(&c["tcp_connect_us"]), 1, "{c:#}");
        assert_eq!((c["tls"]["version"].as_str(), trips(&c["tls"]["handshake_us"])), (Some("1.3"), 1), "{c:#}");
        assert_eq!(trips(&c["exchanges"][0]["first_byte_us"]), 1, "{c:#}");
    }
    let names: Vec<&str> = phases["lookups"].as_array().unwrap().iter().filter_map(|l| l["name"].as_str()).collect();
    assert!(names.iter().all(|n| *n == "server.callbench.test") && names.len() >= calls, "{names:?}");
}

#[test]
fn the_articles_tonic_client_pays_a_lookup_a_connect_a_handshake_and_the_call() {
    let client = common::server_bin("seed000-tonic");
    let script =
        format!("exec {client} \"$CALLBENCH_TARGET\" --ca \"$CALLBENCH_CA_CERT\" --domain localhost --calls 3");
    let (stdout, phases) = across("rust-tonic", &script);
    assert_four_round_trips(&phases, 3);
    assert_clock_agrees(&stdout, 3);
}

#[test]
fn the_rest_call_as_vs_codes_rest_client_made_it_opens_a_connection_per_call() {
    let script = rest_call("");
    let (stdout, phases) = across("rust-actix", &script);
    assert_four_round_trips(&phases, 3);
    assert_clock_agrees(&stdout, 3);
    // Node 14's agent: the client asks for the connection to close, so the server closes it.
    assert_eq!(ended_by(&phases), ["server"; 3], "{phases:#}");
}

/// `node call.js URL --body … --calls 3` and more options, its node_modules installed first.
fn rest_call(more: &str) -> String {
    let dir = common::repo().join("clients/seed000-rest");
    let install = run_cmd(Command::new("node").arg("servers/_node-shared/build.js").arg(&dir));
    assert_eq!(install.code, Some(0), "{}", install.all());
    format!(
        "exec node {}/call.js \"$CALLBENCH_TARGET/auth/9999\" --body '{{\"password\":\"thisispassword\"}}' --calls 3 {more}",
        dir.display()
    )
}

fn ended_by(phases: &Value) -> Vec<&str> {
    phases["connections"].as_array().unwrap().iter().filter_map(|c| c["ended_by"].as_str()).collect()
}

/// The REST client's connection options do what they say, seen in its packets: a keep-alive agent
/// makes its three calls on one connection; with `Connection: close` the server closes each; a new
/// connection per call without that header is closed by the client.
#[test]
fn the_rest_clients_connection_options_keep_or_close_its_connections() {
    let (stdout, phases) = across("rust-actix", &rest_call("--agent keep-alive"));
    calls_in_trips(&stdout, 3);
    let connections = phases["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{phases:#}");
    assert_eq!(connections[0]["exchanges"].as_array().unwrap().len(), 3, "{phases:#}");
    let (_, phases) = across("rust-actix", &rest_call("--agent keep-alive --connection-header close"));
    assert_eq!(ended_by(&phases), ["server"; 3], "{phases:#}");
    let (_, phases) = across("rust-actix", &rest_call("--connection-header keep-alive"));
    assert_eq!(ended_by(&phases), ["client"; 3], "{phases:#}");
}

/// The reproduction's nginx front end (`serve --front`) with its work folder in `dir`.
fn nginx_front(protocol: &str, upstream: &str, dir: &common::TempDir) -> String {
    let script = common::repo().join("reproductions/seed000-clients/nginx-front.sh");
    format!("sh {} {protocol} {upstream} {}", script.display(), dir.str("front"))
}

/// Whether a process runs with `needle` in its command line.
fn running_with(needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle)))
}

/// `serve --tls --front COMMAND`: the front end (nginx) answers the client's TLS on the link's far
/// side and passes the call on to the server, which serves plaintext; the front end is stopped
/// with serve.
#[test]
fn a_front_end_terminates_tls_and_passes_calls_to_the_server_in_plaintext() {
    let dir = common::TempDir::new("front");
    let front = nginx_front("rest", "close", &dir);
    let script = "curl -sk -D - -X PUT -H 'content-type: application/json' --data '{\"password\":\"thisispassword\"}' \
                  \"$CALLBENCH_TARGET/auth/9999\" && echo && \
                  curl -s -o /dev/null -w 'plaintext %{http_code}' -X PUT -H 'content-type: application/json' \
                  --data '{\"password\":\"thisispassword\"}' \"http://$CALLBENCH_SERVER_ADDR/auth/9999\"";
    let (stdout, stderr, phases) = across_with("rust-actix", &["--front", &front], script);
    assert!(stdout.contains("server: nginx/") && stdout.contains("\"hash\":"), "{stdout}");
    assert!(stdout.ends_with("plaintext 200"), "{stdout}");
    assert!(stderr.contains("a front end at 198.18.0.2:"), "{stderr}");
    let versions: Vec<&str> =
        phases["connections"].as_array().unwrap().iter().filter_map(|c| c["tls"]["version"].as_str()).collect();
    assert_eq!(versions, ["1.3"], "the front end's TLS, then the server's plaintext: {phases:#}");
    assert!(!running_with(&dir.str("front")), "nginx outlived serve");
}

/// The article's tonic client through nginx's grpc_pass: every call succeeds and still pays its
/// lookup, connect, handshake and call across the link (the front end sits on the far side).
#[test]
fn the_articles_tonic_client_reaches_the_server_through_the_front_end() {
    let dir = common::TempDir::new("front-grpc");
    let client = common::server_bin("seed000-tonic");
    let script =
        format!("exec {client} \"$CALLBENCH_TARGET\" --ca \"$CALLBENCH_CA_CERT\" --domain localhost --calls 3");
    let (stdout, _, phases) = across_with("rust-tonic", &["--front", &nginx_front("grpc", "keepalive", &dir)], &script);
    assert_four_round_trips(&phases, 3);
    assert_clock_agrees(&stdout, 3);
}

#[test]
fn a_front_end_that_does_not_start_is_an_error() {
    let run = run_cmd(Command::new(common::callbench()).args([
        "serve",
        "rust-actix",
        "--no-build",
        "--network",
        "rtt=1ms",
        "--front",
        "exit 3",
        "--",
        "true",
    ]));
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(run.stderr.contains("the front end exited before it accepted a connection"), "{}", run.all());
}

/// The command's resolver asks the far side's name server (for that name only), and the machine's
/// own resolver file is the same after the run.
#[test]
fn only_the_command_is_pointed_at_the_name_server() {
    let before = std::fs::read("/etc/resolv.conf").ok();
    let script = "getent hosts server.callbench.test; if getent hosts other.callbench.test; then exit 9; fi; cat /etc/resolv.conf";
    let (stdout, _) = across("rust-actix", script);
    assert!(stdout.starts_with("198.18.0.2 "), "{stdout}");
    assert!(stdout.contains("nameserver 198.18.0.2"), "{stdout}");
    assert_eq!(std::fs::read("/etc/resolv.conf").ok(), before);
}

#[test]
fn a_name_that_is_no_host_name_is_a_one_line_error() {
    let run = run_cmd(Command::new(common::callbench()).args([
        "serve",
        "rust-actix",
        "--no-build",
        "--network",
        "rtt=1ms",
        "--dns=not_a_name",
        "--",
        "true",
    ]));
    assert_eq!(run.code, Some(1), "{}", run.all());
    assert!(run.stderr.contains("'not_a_name' is not a host name"), "{}", run.all());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.all());
}

/// Seed 003's Java clients (clients/seed003-java, built here with Maven) across a 5 ms link to the
/// Java servers: every call of a fresh JVM succeeds (the answer is the car sent), none faster
/// than the link's round trip, and the JVM's time before its first call is reported.
#[test]
fn the_articles_java_clients_make_their_sequential_calls_across_the_link() {
    let pom = common::repo().join("clients/seed003-java/pom.xml");
    let build = run_cmd(Command::new("mvn").args(["-q", "-B", "-DskipTests", "package", "-f"]).arg(&pom));
    assert_eq!(build.code, Some(0), "{}", build.all());
    let jar = common::repo().join("clients/seed003-java/target/seed003-clients.jar");
    for (server, kind) in [("java-spring", "rest"), ("java-grpc", "grpc")] {
        let script = format!("exec java -jar {} {kind} \"$CALLBENCH_TARGET\" 40", jar.display());
        let run = run_cmd(Command::new(common::callbench()).args([
            "serve",
            server,
            "--no-build",
            "--network",
            "rtt=5ms",
            "--",
            "sh",
            "-c",
            &script,
        ]));
        assert_eq!(run.code, Some(0), "{server}: {}", run.all());
        let lines: Vec<Value> =
            run.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
        let (summary, calls) = lines.split_last().unwrap();
        assert_eq!((summary["calls"].as_u64(), summary["failed"].as_u64()), (Some(40), Some(0)), "{}", run.stdout);
        assert!(summary["jvm_to_first_call_ms"].as_u64().unwrap() > 0, "{summary}");
        assert_eq!(calls.len(), 40, "{}", run.stdout);
        for c in calls {
            assert_eq!(c["ok"], true, "{c}");
            assert!(c["us"].as_f64().unwrap() >= 4_900.0, "{server}: a call faster than the link's 5 ms: {c}");
        }
    }
}

/// A suite whose clients are the seed articles' own, across emulated links: seed 000's two over
/// TLS at 20 ms, seed 003's gRPC stub at 5 ms.
const SUITE: &str = r#"
name = "seed-clients-e2e"
repetitions = 2
[defaults]
concurrency = 1
new_connection_per_call = true
calls = 3
mode = "per-request"

[[experiment]]
id = "rest"
title = "seed 000's REST client"
servers = ["rust-actix+tls"]
workloads = ["auth"]
clients = ["seed000-rest"]
network = { rtt = "20ms" }

[[experiment]]
id = "tonic"
title = "seed 000's tonic client"
servers = ["rust-tonic+tls"]
workloads = ["auth"]
clients = ["seed000-tonic"]
network = { rtt = "20ms" }

[[experiment]]
id = "java"
title = "seed 003's gRPC stub"
servers = ["java-grpc"]
workloads = ["cars"]
clients = ["seed003-java"]
calls = 20
new_connection_per_call = false
network = { rtt = "5ms" }
"#;

/// Each client's calls crossed its link: seed 000's a new connection each, three round trips
/// (connect, TLS 1.3, the call; no name lookup in a suite), by the client's own clock; seed 003's
/// stub one kept connection, no call faster than the link. No client or server outlives the run.
#[test]
fn the_seed_clients_are_a_suites_clients_across_the_link() {
    // The clients' builds, as `callbench run` makes them without --no-build (the workspace's and the
    // servers' builds are the tests' own).
    for tool in ["seed000-rest", "seed003-java"] {
        let tool = callbench_peers::by_name(tool).unwrap();
        let argv = tool.build_command(&common::repo()).unwrap();
        let build = run_cmd(Command::new(&argv[0]).args(&argv[1..]).current_dir(common::repo()));
        assert_eq!(build.code, Some(0), "{}", build.all());
    }
    let dir = common::TempDir::new("seed-clients-suite");
    std::fs::write(dir.path("suite.toml"), SUITE).unwrap();
    let (suite, out) = (dir.str("suite.toml"), dir.str("results"));
    let mut running = common::Running::command("run", &[&suite, "--out", &out, "--no-build"]);
    let children = common::watch_children(&mut running, std::time::Duration::from_secs(600), |_, _| {});
    let run = running.finish(std::time::Duration::from_secs(5));
    for pid in &children {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} (a client or a server) outlived the run"
        );
    }
    let text =
        std::fs::read_to_string(dir.path("results/results.json")).unwrap_or_else(|e| panic!("{e}: {}", run.all()));
    let results: Value = serde_json::from_str(&text).unwrap();
    common::validate_results(&results);
    assert_eq!(results["complete"], true, "{}", run.all());
    let cell = |id: &str| {
        results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {}", run.all()))
    };
    for id in ["rest/auth/seed000-rest+rust-actix+tls", "tonic/auth/seed000-tonic+rust-tonic+tls"] {
        let c = cell(id);
        assert_eq!(c["status"], "ok", "{id}: {c:#}");
        for r in c["runs"].as_array().unwrap() {
            assert_eq!((r["calls_ok"].as_u64(), r["calls_errors"].as_u64()), (Some(3), Some(0)), "{id}: {r:#}");
            assert_eq!(r["outside"]["connections_opened"], 3, "{id}: a connection per call: {r:#}");
            let p50 = r["peer"]["latency_us"]["p50"].as_f64().unwrap() / (RTT_MS * 1000.0);
            assert!((2.9..4.5).contains(&p50), "{id}: {p50} round trips a call: {r:#}");
        }
    }
    let java = cell("java/cars/seed003-java+java-grpc");
    assert_eq!(java["status"], "ok", "{java:#}");
    for r in java["runs"].as_array().unwrap() {
        assert_eq!((r["calls_ok"].as_u64(), r["calls_errors"].as_u64()), (Some(20), Some(0)), "{r:#}");
        assert_eq!(r["outside"]["connections_opened"], 1, "one kept connection: {r:#}");
        assert!(r["duration_s"].as_f64().unwrap() >= 20.0 * 0.005, "faster than the link: {r:#}");
    }
}
