//! callbench reference server: REST/JSON on axum 0.8 (hyper 1, tokio).

mod errors;
mod extract;
mod routes;

use axum::serve::{Listener, ListenerExt};
use callbench_serverkit::{announce, bind, fail, shutdown_signal, ServeArgs};
use clap::Parser;
use std::future::{poll_fn, Future};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::oneshot;

/// REST/JSON server of the callbench contract on axum.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() {
    let args = Cli::parse().serve;
    let users = Arc::new(args.open_users());
    // Bind first (port 0 included) so the announced address is the real one.
    let listener = bind(&args);
    // Exactly `--workers` tokio worker threads run the connections and handlers.
    let runtime = args.runtime();
    if let Err(e) = runtime.block_on(serve(listener, routes::router(users))) {
        fail(format!("server error: {e}"));
    }
}

/// In-flight calls get this long to finish once a stop signal comes.
const GRACE: Duration = Duration::from_secs(1);

async fn serve(listener: std::net::TcpListener, app: axum::Router) -> std::io::Result<()> {
    // A response's last small segment must not wait for the client's delayed ACK (Nagle).
    let listener = tokio::net::TcpListener::from_std(listener)?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let addr = listener.local_addr()?;
    // serverkit's signal future installs its handlers on its first poll: do that before the
    // announce, so a signal sent right after it stops the server instead of killing it.
    let mut stop = Box::pin(shutdown_signal());
    if poll_fn(|cx| Poll::Ready(stop.as_mut().poll(cx).is_ready())).await {
        return Ok(());
    }
    let (stopping_tx, stopping_rx) = oneshot::channel();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        stop.await;
        let _ = stopping_tx.send(());
    });
    announce(addr);
    // A graceful stop waits for every connection, idle or half-sent ones too: bound it.
    let deadline = async {
        match stopping_rx.await {
            Ok(()) => tokio::time::sleep(GRACE).await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        result = server => result,
        () = deadline => Ok(()),
    }
}
