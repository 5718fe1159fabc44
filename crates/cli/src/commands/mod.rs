//! One file per subcommand.

pub mod compare;
pub mod gen_users;
pub mod lab;
pub mod load;
pub mod report;
pub mod run;
pub mod serve;
pub mod servers;
pub mod verify;

use tokio::signal::unix::{signal, SignalKind};

/// On Ctrl-C or SIGTERM: stop every server we started, then exit 130 / 143.
pub fn stop_servers_on_signals() {
    for (kind, code) in [(SignalKind::interrupt(), 130), (SignalKind::terminate(), 143), (SignalKind::hangup(), 129)] {
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                stream.recv().await;
                callbench_servers::process::set_interrupted(code);
                eprintln!("callbench: interrupted, stopping servers");
                callbench_servers::process::kill_all();
                callbench_link::cleanup::remove_all();
                std::process::exit(code);
            });
        }
    }
}

/// The checkout, or a clear error.
pub fn repo() -> anyhow::Result<callbench_servers::repo::Repo> {
    callbench_servers::repo::Repo::locate()
}
