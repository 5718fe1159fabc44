//! One file per subcommand.

pub mod claims;
pub mod compare;
pub mod gen_users;
pub mod lab;
pub mod load;
pub mod phases;
pub mod prometheus;
pub mod report;
pub mod run;
pub mod run_endpoints;
pub mod serve;
pub mod servers;
pub mod verify;

use tokio::signal::unix::{signal, SignalKind};

/// On Ctrl-C or SIGTERM: stop every server we started, then exit 130 / 143. The servers are
/// stopped before anything is printed: a stderr nobody reads (a full pipe) blocks a print, and a
/// closed one fails it, and neither may keep a server alive.
pub fn stop_servers_on_signals() {
    for (kind, code) in [(SignalKind::interrupt(), 130), (SignalKind::terminate(), 143), (SignalKind::hangup(), 129)] {
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                stream.recv().await;
                callbench_launcher::process::set_interrupted(code);
                callbench_launcher::process::kill_all();
                callbench_link::cleanup::remove_all();
                say_briefly("callbench: interrupted, servers stopped");
                std::process::exit(code);
            });
        }
    }
}

/// Prints `line` to stderr unless that takes more than 200 ms (a pipe nobody reads) or fails.
fn say_briefly(line: &'static str) {
    let (done, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{line}");
        let _ = done.send(());
    });
    let _ = printed.recv_timeout(std::time::Duration::from_millis(200));
}

/// The checkout, or a clear error.
pub fn repo() -> anyhow::Result<callbench_launcher::repo::Repo> {
    Ok(callbench_launcher::repo::Repo::locate()?)
}

/// The checkout, or outside one (an installed callbench) its own folder: for what needs no servers.
pub fn repo_or_standalone() -> anyhow::Result<callbench_launcher::repo::Repo> {
    Ok(callbench_launcher::repo::Repo::locate_or_standalone()?)
}
