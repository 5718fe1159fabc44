//! callbench reference server: REST/JSON on axum 0.8 (hyper 1, tokio).

mod errors;
mod extract;
mod http3;
mod records;
mod routes;
mod tls;
mod whole_body;

use axum::serve::ListenerExt;
use callbench_serverkit::{announce, bind, fail, shutdown_signal, tls as serverkit_tls, ServeArgs};
use clap::Parser;
use std::future::{poll_fn, Future, IntoFuture};
use std::pin::Pin;
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
    /// Also serve HTTP/3 (QUIC) on UDP at the same port (needs --tls)
    #[arg(long, requires = "tls")]
    http3: bool,
    /// HTTP/3's congestion controller (default: CALLBENCH_QUIC_CONGESTION if set, which `callbench serve`
    /// passes on, else cubic)
    #[arg(long, value_enum, requires = "http3")]
    quic_congestion: Option<http3::Congestion>,
}

/// `--quic-congestion`, else CALLBENCH_QUIC_CONGESTION, else CUBIC; a value it does not know stops the server.
fn congestion(flag: Option<http3::Congestion>) -> http3::Congestion {
    use clap::ValueEnum;
    flag.unwrap_or_else(|| match std::env::var("CALLBENCH_QUIC_CONGESTION") {
        Ok(name) => http3::Congestion::from_str(&name, true)
            .unwrap_or_else(|_| fail(format!("CALLBENCH_QUIC_CONGESTION={name}: expected cubic, new-reno or bbr"))),
        Err(_) => http3::Congestion::Cubic,
    })
}

fn main() {
    let cli = Cli::parse();
    let args = cli.serve;
    let users = Arc::new(args.open_users());
    // Bind first (port 0 included) so the announced address is the real one.
    let listener = bind(&args);
    let udp = cli.http3.then(|| {
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| fail(format!("no local address: {e}")));
        std::net::UdpSocket::bind((args.host.as_str(), port))
            .unwrap_or_else(|e| fail(format!("cannot listen for HTTP/3 on UDP port {port}: {e}")))
    });
    let certificate = args.certificate();
    // Exactly `--workers` tokio worker threads run the connections and handlers.
    let runtime = args.runtime();
    let app = routes::router(users);
    let quic = match (udp, &certificate) {
        (Some(udp), Some(cert)) => {
            let _entered = runtime.enter();
            let congestion = congestion(cli.quic_congestion);
            let endpoint =
                http3::endpoint(udp, cert, congestion).unwrap_or_else(|e| fail(format!("cannot serve HTTP/3: {e}")));
            runtime.spawn(http3::serve(endpoint.clone(), app.clone()));
            Some(endpoint)
        }
        _ => None,
    };
    let served = runtime.block_on(serve(listener, app, certificate));
    if let Some(endpoint) = quic {
        // Tells the HTTP/3 clients the server is gone, instead of leaving them to time out.
        endpoint.close(0u32.into(), b"server stopping");
        let _ = runtime.block_on(async { tokio::time::timeout(GRACE, endpoint.wait_idle()).await });
    }
    if let Err(e) = served {
        fail(format!("server error: {e}"));
    }
}

/// In-flight calls get this long to finish once a stop signal comes.
const GRACE: Duration = Duration::from_secs(1);

/// Serves HTTP/1.1 and HTTP/2 (hyper-util's auto builder: prior knowledge on plaintext, ALPN over TLS).
async fn serve(
    listener: std::net::TcpListener,
    app: axum::Router,
    certificate: Option<serverkit_tls::SelfSigned>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    // serverkit's signal future installs its handlers on its first poll: do that before the
    // announce, so a signal sent right after it stops the server instead of killing it.
    let mut stop = Box::pin(shutdown_signal());
    if poll_fn(|cx| Poll::Ready(stop.as_mut().poll(cx).is_ready())).await {
        return Ok(());
    }
    let (stopping_tx, stopping_rx) = oneshot::channel();
    let stopping = async move {
        stop.await;
        let _ = stopping_tx.send(());
    };
    let server: Pin<Box<dyn Future<Output = std::io::Result<()>>>> = match certificate {
        None => {
            // A response's last small segment must not wait for the client's delayed ACK (Nagle).
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            Box::pin(axum::serve(listener, app).with_graceful_shutdown(stopping).into_future())
        }
        Some(cert) => {
            let config = serverkit_tls::server_config(&cert, &[serverkit_tls::ALPN_H2, serverkit_tls::ALPN_HTTP1]);
            let listener = tls::TlsListener::new(listener, config)?;
            Box::pin(axum::serve(listener, app).with_graceful_shutdown(stopping).into_future())
        }
    };
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
