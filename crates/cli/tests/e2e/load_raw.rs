//! End-to-end: `callbench load raw://` against an echo none of us wrote (Debian's socat, one `cat`
//! per connection, installed by scripts/setup): the bytes a call sends come back and are all that
//! crosses the wire, and raw targets given what they cannot use are one-line errors.

use crate::common;

use common::{assert_all_ok, free_port, installed, load_fails, load_json, num, wait_listening};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// socat echoing on 127.0.0.1:`port`; its whole process group (a socat and a cat per connection)
/// is killed when this drops.
struct Echo {
    child: Child,
    port: u16,
}

impl Echo {
    fn start() -> Echo {
        let socat = installed("/usr/bin/socat");
        let port = free_port();
        let child = Command::new(socat)
            .args([&format!("TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork"), "EXEC:cat"])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start socat");
        let echo = Echo { child, port };
        assert!(wait_listening(&format!("127.0.0.1:{port}"), Duration::from_secs(10)), "socat did not listen");
        echo
    }

    fn url(&self, query: &str) -> String {
        format!("raw://127.0.0.1:{}{query}", self.port)
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        // SAFETY: a signal to the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

#[test]
fn an_echo_returns_every_byte_and_nothing_else_crosses_the_wire() {
    let echo = Echo::start();
    let report = load_json(&["-n", "300", "-c", "4", &echo.url("?size=100")]);
    assert_all_ok(&report, 300);
    assert_eq!(report["protocol"], "raw");
    assert_eq!(report["call"], "echo 100 B");
    assert_eq!(num(&report, "/connections_opened"), 4.0);
    for side in ["sent", "received"] {
        assert_eq!(num(&report, &format!("/payload_bytes_per_call/{side}")), 100.0, "{report:#}");
        // No framing: the wire carries the payload and nothing more.
        assert_eq!(num(&report, &format!("/wire_bytes_per_call/{side}")), 100.0, "{report:#}");
    }
    let fresh = load_json(&["-n", "20", "-c", "2", "--new-connection-per-call", &echo.url("")]);
    assert_all_ok(&fresh, 20);
    assert_eq!(num(&fresh, "/connections_opened"), 20.0);
    assert_eq!(num(&fresh, "/payload_bytes_per_call/sent"), 64.0, "64 bytes by default: {fresh:#}");
}

#[test]
fn raw_targets_refuse_what_they_cannot_use() {
    let echo = Echo::start();
    let url = echo.url("");
    load_fails(&["-n", "1", "raw://127.0.0.1"], "port");
    load_fails(&["-n", "1", &format!("{url}/echo")], "no path");
    load_fails(&["-n", "1", &echo.url("?size=0")], "size");
    load_fails(&["-n", "1", "--workload", "auth", &url], "--workload");
    load_fails(&["-n", "1", "-d", "hello", &url], "-d");
    load_fails(&["-n", "1", "--http2", &url], "--http2");
    load_fails(&["-n", "1", "raw://10.9.8.7:9"], "refusing");
}
