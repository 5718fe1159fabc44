//! End-to-end: a target outside loopback, as every real user's is. The test makes a network
//! namespace of its own joined to this one by a veth pair (198.19.X.0/30, a benchmarking range) and
//! starts a stock server there (Debian's nginx at 198.19.X.2). `load` and `run` refuse that
//! address without `--allow-remote`, and measure it with it, over the test's own interfaces (root
//! needed, as for every namespace; the namespace and its veth go when the test ends).

use crate::common;

use common::nginx::{Nginx, Options};
use common::{run_cmd, Running, TempDir};
use std::process::Command;
use std::time::Duration;

/// A namespace and the veth pair that joins it to this one; removed on drop.
struct Namespace {
    name: String,
    /// This namespace's address and the other side's.
    ours: String,
    theirs: String,
}

impl Namespace {
    fn create() -> Namespace {
        let pid = std::process::id();
        let (name, host_if, ns_if) = (format!("cbremote{pid}"), format!("cbr{pid}a"), format!("cbr{pid}b"));
        let subnet = 20 + pid % 200;
        let ours = format!("198.19.{subnet}.1");
        let theirs = format!("198.19.{subnet}.2");
        let ns = Namespace { name: name.clone(), ours: ours.clone(), theirs: theirs.clone() };
        let ip = |args: &[&str]| {
            let run = run_cmd(Command::new("ip").args(args));
            assert_eq!(run.code, Some(0), "ip {args:?}: {}", run.all());
        };
        ip(&["netns", "add", &name]);
        ip(&["link", "add", &host_if, "type", "veth", "peer", "name", &ns_if]);
        ip(&["link", "set", &ns_if, "netns", &name]);
        ip(&["addr", "add", &format!("{ours}/30"), "dev", &host_if]);
        ip(&["link", "set", &host_if, "up"]);
        ip(&["-n", &name, "addr", "add", &format!("{theirs}/30"), "dev", &ns_if]);
        ip(&["-n", &name, "link", "set", &ns_if, "up"]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        ns
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // The veth pair goes with its end inside the namespace.
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

#[test]
fn load_and_run_measure_a_remote_address_with_allow_remote_only() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a network namespace needs root");
        return;
    }
    let ns = Namespace::create();
    // nginx rather than Python's http.server: http.server's listen backlog of 5 drops SYNs at 50 calls in
    // flight, and each dropped one waits a second or more to be sent again (about 15 s a round).
    let options =
        Options { file: "remote\n".into(), inside: Some((ns.theirs.clone(), ns.name.clone())), ..Options::default() };
    let nginx = Nginx::start(&options);
    // The route to it leads over the test's own veth, from this namespace's address.
    let route = run_cmd(Command::new("ip").args(["route", "get", &ns.theirs]));
    assert!(route.stdout.contains(&format!("src {}", ns.ours)), "{}", route.all());
    let url = format!("http://{}:{}/file.txt", ns.theirs, nginx.h1);

    common::load_fails(&["-n", "1", &url], "--allow-remote");
    let report = common::load_json(&["--allow-remote", "-n", "20", "-c", "2", &url]);
    common::assert_all_ok(&report, 20);

    let dir = TempDir::new("remote-run");
    let quick = ["--repetitions", "2", "--duration", "50ms", "--warmup", "10ms", "-q"];
    let refused = Running::command("run", &[&quick[..], &[&url, "--out", &dir.str("refused")]].concat())
        .finish(Duration::from_secs(60));
    common::assert_one_line(&refused, "--allow-remote");
    let pid = nginx.pid().to_string();
    let args = ["--allow-remote", &url, "--server-pid", &pid, "--out", &dir.str("out")];
    let run = Running::command("run", &[&quick[..], &args[..]].concat()).finish(Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{}", run.all());
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out").join("results.json")).unwrap()).unwrap();
    common::validate_results(&results);
    assert_eq!(results["servers"][0]["endpoint"]["url"], url.as_str());
    for cell in results["cells"].as_array().unwrap() {
        assert_eq!(cell["status"], "ok", "{}", run.all());
        // Its CPU from its pid and its worker's (the master's process group), across the namespace.
        assert!(cell["summary"]["server_cpu_us_per_call"]["median"].as_f64().is_some_and(|v| v > 0.0), "{cell:#}");
    }
}
