//! Nothing a link made outlives it: dropped, it leaves no namespace; a run killed with SIGKILL
//! (no handler runs) leaves only its namespaces' names, and the next link made removes them.

use callbench_link::{Link, LinkSpec};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// callbench's namespaces now (`ip netns list` reads the same directory).
fn ours() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/run/netns") else { return vec![] };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("callbench-"))
        .collect();
    names.sort();
    names
}

fn with_pid(pid: u32) -> Vec<String> {
    ours().into_iter().filter(|n| n.starts_with(&format!("callbench-{pid}."))).collect()
}

#[test]
fn a_dropped_link_leaves_nothing() {
    let link = Link::create(&LinkSpec::transparent(), &[]).unwrap();
    let names = [link.client.name.clone(), link.server.name.clone()];
    assert!(names.iter().all(|n| ours().contains(n)), "{names:?} not in {:?}", ours());
    drop(link);
    assert!(names.iter().all(|n| !ours().contains(n)), "{names:?} left in {:?}", ours());
}

#[test]
fn a_dropped_direct_path_leaves_nothing() {
    let link = Link::direct().unwrap();
    let names = [link.client.name.clone(), link.server.name.clone()];
    assert!(names.iter().all(|n| ours().contains(n)), "{names:?} not in {:?}", ours());
    drop(link);
    assert!(names.iter().all(|n| !ours().contains(n)), "{names:?} left in {:?}", ours());
}

/// Not a test on its own (hence ignored, and a no-op without CALLBENCH_LINK_HOLD): the process
/// the next test starts, by running this test binary, and kills with SIGKILL.
#[test]
#[ignore]
fn hold_a_link_until_killed() {
    if std::env::var_os("CALLBENCH_LINK_HOLD").is_none() {
        return;
    }
    let link = Link::create(&LinkSpec::parse("rtt=10ms").unwrap(), &[]).unwrap();
    println!("holding {}", link.client.name);
    // Held until the killer acts; if it ends first, its end of stdin closes and this returns.
    let _ = std::io::stdin().read_line(&mut String::new());
}

#[test]
fn a_killed_run_is_cleaned_up_by_the_next() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hold_a_link_until_killed", "--ignored", "--nocapture", "--test-threads=1"])
        .env("CALLBENCH_LINK_HOLD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let held = loop {
        let line = lines.next().expect("the holder ended before making its link").unwrap();
        // libtest may print "test NAME ... " on the same line first.
        if let Some((_, name)) = line.split_once("holding ") {
            break name.trim().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no link made");
    };
    let pid = child.id();
    assert!(with_pid(pid).contains(&held));
    assert_eq!(with_pid(pid).len(), 2, "client and server namespaces: {:?}", with_pid(pid));
    child.kill().unwrap(); // SIGKILL: no handler, no drop
    child.wait().unwrap();
    // (Another test's link may already have removed them; the next link must, in any case.)
    let next = Link::create(&LinkSpec::transparent(), &[]).unwrap();
    assert!(with_pid(pid).is_empty(), "left behind: {:?}", with_pid(pid));
    drop(next);
}

/// A namespace of someone else's, made with `ip netns add`, and deleted when the test ends,
/// passed or not.
struct Theirs(String);

impl Theirs {
    fn add(name: String) -> Theirs {
        let status = Command::new("ip").args(["netns", "add", &name]).status().expect("run ip");
        assert!(status.success(), "ip netns add {name}: {status}");
        Theirs(name)
    }
}

impl Drop for Theirs {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "delete", &self.0]).status();
    }
}

#[test]
fn namespaces_named_otherwise_are_left_alone() {
    // Names that start as callbench's do but are not in its full form: no owner a dead run had.
    let pid = std::process::id();
    let theirs = [format!("callbench-x{pid}"), format!("callbench-4194304.5-x{pid}"), format!("callbench-{pid}")]
        .map(Theirs::add);
    let link = Link::create(&LinkSpec::transparent(), &[]).unwrap();
    drop(link);
    for ns in &theirs {
        assert!(ours().contains(&ns.0), "{} was removed: {:?}", ns.0, ours());
    }
}
