//! End-to-end: `callbench lab HOST...` makes a network namespace per host on one bridge; a real
//! `callbench load` in one host reaches a stock server (Python's http.server) in another, across
//! the bridge; Ctrl-C removes every namespace (root needed, as for every link).

use crate::common;

use common::{run_cmd, Guard};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `ip netns exec NS ARGV...`
fn in_host(ns: &str, argv: &[&str]) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]).args(argv);
    cmd
}

#[test]
fn hosts_of_a_lab_reach_each_other_and_ctrl_c_removes_them() {
    let mut lab = Guard::spawn(
        Command::new(common::callbench())
            .args(["lab", "client", "server"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let mut lines = BufReader::new(lab.child.stdout.take().expect("piped stdout")).lines();
    let mut hosts = Vec::new();
    for _ in 0..2 {
        let line = lines.next().expect("a line per host").expect("utf-8");
        let fields: Vec<String> = line.split_whitespace().map(String::from).collect();
        assert_eq!(fields.len(), 3, "HOST NAMESPACE ADDRESS: {line}");
        assert!(std::path::Path::new("/run/netns").join(&fields[1]).exists(), "{line}");
        hosts.push(fields);
    }
    assert_eq!((hosts[0][0].as_str(), hosts[0][2].as_str()), ("client", "198.18.1.1"));
    assert_eq!((hosts[1][0].as_str(), hosts[1][2].as_str()), ("server", "198.18.1.2"));
    let (client, server) = (hosts[0][1].clone(), hosts[1][1].clone());

    let port = common::free_port().to_string();
    let _stock = Guard::spawn(
        in_host(&server, &["python3", "-m", "http.server", "--bind", "198.18.1.2", &port])
            .current_dir(common::repo())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    // Listening, as the server's own host sees it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !run_cmd(&mut in_host(&server, &["ss", "-Hltn", &format!("sport = :{port}")])).stdout.contains(&port) {
        assert!(Instant::now() < deadline, "http.server did not listen within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://198.18.1.2:{port}/README.md");
    let load =
        run_cmd(&mut in_host(&client, &[common::callbench(), "load", "-q", "-o", "json", "-n", "20", "-c", "1", &url]));
    assert_eq!(load.code, Some(0), "{}", load.all());
    let report: serde_json::Value = serde_json::from_str(&load.stdout).expect("json");
    common::assert_all_ok(&report, 20);
    // The same address from the machine's own namespace is not in any lab: refused.
    common::load_fails(&["-n", "1", &url], "emulated link");

    lab.signal(libc::SIGINT);
    let status = lab.wait_for(Duration::from_secs(30)).expect("lab ends on Ctrl-C");
    assert_eq!(status.code(), Some(130));
    for host in &hosts {
        assert!(!std::path::Path::new("/run/netns").join(&host[1]).exists(), "{} left behind", host[1]);
    }
}

#[test]
fn bad_host_names_are_one_line_errors() {
    for (names, needle) in [(vec!["Head"], "host name"), (vec!["a", "a"], "twice"), (vec!["lab"], "host name")] {
        let run = run_cmd(Command::new(common::callbench()).arg("lab").args(&names));
        assert_eq!(run.code, Some(1), "{names:?}: {}", run.all());
        common::assert_one_line(&run, needle);
    }
}
