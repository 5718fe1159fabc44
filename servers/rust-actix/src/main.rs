//! callbench reference server: REST/JSON on actix-web 4, the framework of seed 000.

mod errors;
mod extract;
mod records;
mod routes;

use actix_web::dev::Service;
use actix_web::{web, App, HttpServer};
use callbench_serverkit::{announce, bind, shutdown_signal, tls, ServeArgs};
use clap::Parser;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

/// REST/JSON server of the callbench contract on actix-web.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args = Cli::parse().serve;
    let users = web::Data::new(args.open_users());
    // Bind first (port 0 included) so the announced address is the real one.
    let listener = bind(&args);
    let addr = listener.local_addr()?;
    let certificate = args.certificate();

    // Compress: replies gzipped when the client accepts gzip (request bodies are inflated by actix itself).
    let server = HttpServer::new(move || {
        App::new()
            .wrap(actix_web::middleware::Compress::default())
            // Every answer counted for callbench (CALLBENCH_ANSWERED_FILE), beside a load tool's claim;
            // and a pause now and then when CALLBENCH_STALL asks for one.
            .wrap_fn(|request, service| {
                callbench_serverkit::stall::maybe();
                let answer = service.call(request);
                async move {
                    let answer = answer.await;
                    callbench_serverkit::answered::count();
                    answer
                }
            })
            .app_data(users.clone())
            .configure(routes::config)
    })
    .workers(usize::from(args.workers))
    // A response's last small segment must not wait for the client's delayed ACK (Nagle).
    .tcp_nodelay(true)
    // SIGINT and SIGTERM both stop gracefully, as in every other server (actix's own SIGINT is a forced stop).
    .shutdown_signal(shutdown_signal())
    // Idle keep-alive connections would hold a graceful stop for the default 30 s.
    .shutdown_timeout(1);
    let server = match certificate {
        // actix puts its own ALPN ids first: h2, then http/1.1.
        Some(cert) => server
            .tls_handshake_timeout(tls::HANDSHAKE_TIMEOUT)
            .listen_rustls_0_23(listener, tls::server_config(&cert, &[]))?,
        // HTTP/1.1, and HTTP/2 with prior knowledge (the first bytes are peeked to tell).
        None => server.listen_auto_h2c(listener)?,
    }
    .run();

    // `run()` is lazy: its first poll starts the workers, the accept loop and the signal watch.
    let mut server = pin!(server);
    if let Poll::Ready(result) = poll_fn(|cx| Poll::Ready(server.as_mut().poll(cx))).await {
        return result;
    }
    announce(addr);
    server.await
}
