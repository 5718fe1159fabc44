//! callbench's reference gRPC server on tonic: start-up and shutdown.
//! The services are in `services.rs`, `records.rs` and `standard.rs`, their settings in
//! `routes.rs`, the content-type and size checks in `guard.rs`.

mod guard;
mod records;
mod routes;
mod services;
mod standard;
mod status;

use callbench_serverkit::{self as serverkit, fail, ServeArgs};
use callbench_workloads::auth::UserStore;
use callbench_workloads::limits::MAX_BODY_BYTES;
use clap::Parser;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Waker};
use std::time::Duration;
use tokio::sync::oneshot;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

/// The shared serving flags, plus `--version`.
#[derive(Parser)]
#[command(version, about = "callbench's reference gRPC server on tonic")]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// Serve without our guard layer (guard.rs) in front of the services, to measure what it costs:
    /// valid calls are answered the same; over-limit messages and non-gRPC content types then get
    /// tonic's own answers, which the contract does not allow (the rust-tonic-noguard manifest declares them)
    #[arg(long)]
    no_guard: bool,
}

/// How long calls still running at SIGINT/SIGTERM get before the server exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

fn main() {
    let cli = Cli::parse();
    let users = cli.serve.open_users();
    cli.serve.runtime().block_on(serve(&cli.serve, !cli.no_guard, users));
}

async fn serve(args: &ServeArgs, guarded: bool, users: UserStore) {
    let routes = routes::routes(users).await.unwrap_or_else(|e| fail(format!("cannot set up reflection: {e}")));
    let listener = tokio::net::TcpListener::from_std(serverkit::bind(args))
        .unwrap_or_else(|e| fail(format!("cannot use the listener: {e}")));
    let addr = listener.local_addr().unwrap_or_else(|e| fail(format!("cannot read the listening address: {e}")));
    // Serving from our own listener ignores Server::tcp_nodelay: set it here.
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));

    // Install the signal handlers before announcing, so a harness that signals
    // right after reading the line stops us cleanly rather than killing us.
    let mut signal = pin!(serverkit::shutdown_signal());
    if poll_once(signal.as_mut()) {
        return;
    }
    let (stopping, stopped) = oneshot::channel();
    let shutdown = async move {
        signal.await;
        let _ = stopping.send(());
    };

    let mut builder = Server::builder();
    if let Some(cert) = args.certificate() {
        // tonic builds its own rustls configuration (ring: the process default serverkit set; ALPN h2).
        let identity = Identity::from_pem(&cert.cert_pem, &cert.key_pem);
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(identity).timeout(serverkit::tls::HANDSHAKE_TIMEOUT))
            .unwrap_or_else(|e| fail(format!("cannot set up TLS: {e}")));
    }
    // The two servers differ in type (the layer is part of it): boxed, they are one.
    // Every answer counted for callbench (CALLBENCH_ANSWERED_FILE), beside a load tool's claim;
    // and a pause now and then when CALLBENCH_STALL asks for one.
    let mut builder = builder.layer(tower::util::MapResponseLayer::new(|answer| {
        serverkit::stall::maybe();
        serverkit::answered::count();
        answer
    }));
    let server: Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>> = if guarded {
        let guard = guard::GuardLayer::new(MAX_BODY_BYTES).streaming_requests(routes::streaming_request_paths());
        let mut builder = builder.layer(guard);
        Box::pin(builder.add_routes(routes).serve_with_incoming_shutdown(incoming, shutdown))
    } else {
        Box::pin(builder.add_routes(routes).serve_with_incoming_shutdown(incoming, shutdown))
    };
    serverkit::announce(addr);

    // On a signal tonic stops accepting and waits for open calls; a call that
    // never ends (a client that stops sending) must not keep us from exiting.
    let grace_over = async move {
        match stopped.await {
            Ok(()) => tokio::time::sleep(SHUTDOWN_GRACE).await,
            Err(_) => std::future::pending().await, // the server ended by itself
        }
    };
    tokio::select! {
        result = server => {
            if let Err(e) = result {
                fail(format!("server error: {e}"));
            }
        }
        () = grace_over => eprintln!("stopping with calls still open after {SHUTDOWN_GRACE:?}"),
    }
}

/// Polls a future once (its handlers get installed); true if it is already done.
fn poll_once(future: Pin<&mut impl Future<Output = ()>>) -> bool {
    future.poll(&mut Context::from_waker(Waker::noop())).is_ready()
}
