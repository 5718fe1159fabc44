//! callbench's floor server: what a connection reads it writes back, with no protocol on top, so a
//! call to it (`callbench load raw://`) costs what the kernel alone costs. One thread per worker,
//! each with its own epoll set; they share the listener (EPOLLEXCLUSIVE wakes one per connection).

mod echo;

use callbench_serverkit::ServeArgs;
use clap::Parser;

/// Echo server for callbench's raw:// floor cells.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() {
    let args = Cli::parse().serve;
    if args.tls {
        callbench_serverkit::fail("raw-echo serves plain TCP only (no --tls)".into());
    }
    let listener = std::net::TcpListener::bind((args.host.as_str(), args.port))
        .unwrap_or_else(|e| callbench_serverkit::fail(format!("cannot listen on {}: {e}", args.bind_addr())));
    listener
        .set_nonblocking(true)
        .unwrap_or_else(|e| callbench_serverkit::fail(format!("cannot set the listener non-blocking: {e}")));
    let addr = listener.local_addr().unwrap_or_else(|e| callbench_serverkit::fail(e.to_string()));
    let listener = std::sync::Arc::new(listener);
    let workers: Vec<_> = (0..args.workers)
        .map(|_| {
            let listener = listener.clone();
            std::thread::spawn(move || echo::serve(&listener))
        })
        .collect();
    callbench_serverkit::announce(addr);
    for worker in workers {
        match worker.join() {
            Ok(Err(e)) => callbench_serverkit::fail(e),
            Err(_) => callbench_serverkit::fail("an echo thread panicked".into()),
            Ok(Ok(())) => {}
        }
    }
}
