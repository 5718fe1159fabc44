//! `--http3`: the same router served over HTTP/3 (h3 on quinn), on UDP at the TCP port's number, as
//! sites that offer HTTP/3 beside HTTP/1.1 and HTTP/2 do. Each request stream becomes an
//! `http::Request` whose body streams in as it arrives, and the answer's body streams out frame by
//! frame, so the NDJSON upload and download behave as over TCP.

use axum::body::Body;
use bytes::{Buf, Bytes};
use callbench_serverkit::tls::SelfSigned;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use std::net::UdpSocket;
use std::sync::Arc;
use tower::ServiceExt;

type Send = h3::server::RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;
type Recv = h3::server::RequestStream<h3_quinn::RecvStream, Bytes>;

/// The congestion controller of every connection the server accepts (its send side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Congestion {
    /// CUBIC (RFC 9438), quinn's default and Linux TCP's.
    Cubic,
    /// NewReno (RFC 9002's own example).
    NewReno,
    /// BBR as quinn implements it (v1, marked experimental by quinn).
    Bbr,
}

impl Congestion {
    fn factory(self) -> Arc<dyn quinn::congestion::ControllerFactory + std::marker::Send + Sync> {
        match self {
            Congestion::Cubic => Arc::new(quinn::congestion::CubicConfig::default()),
            Congestion::NewReno => Arc::new(quinn::congestion::NewRenoConfig::default()),
            Congestion::Bbr => Arc::new(quinn::congestion::BbrConfig::default()),
        }
    }
}

/// A QUIC endpoint on `socket` with this certificate (ALPN h3, 0-RTT accepted).
pub fn endpoint(socket: UdpSocket, cert: &SelfSigned, congestion: Congestion) -> std::io::Result<quinn::Endpoint> {
    let mut tls = cert.server_config(&[b"h3"]).map_err(std::io::Error::other)?;
    // 0-RTT: a returning client's request in its first flight (replay is the client's choice to risk).
    tls.max_early_data_size = u32::MAX;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).map_err(std::io::Error::other)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.congestion_controller_factory(congestion.factory());
    config.transport_config(Arc::new(transport));
    let runtime = Arc::new(quinn::TokioRuntime);
    quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, runtime)
}

/// Accepts connections until the endpoint is closed.
pub async fn serve(endpoint: quinn::Endpoint, app: axum::Router) {
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(connection(incoming, app.clone()));
    }
}

async fn connection(incoming: quinn::Incoming, app: axum::Router) {
    let Ok(connecting) = incoming.accept() else { return };
    // 0.5-RTT: answer a 0-RTT request before the handshake completes, as the client meant.
    let quic = match connecting.into_0rtt() {
        Ok((quic, _)) => quic,
        Err(connecting) => match connecting.await {
            Ok(quic) => quic,
            Err(_) => return,
        },
    };
    let Ok(mut conn) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(quic)).await else {
        return;
    };
    while let Ok(Some(resolver)) = conn.accept().await {
        let app = app.clone();
        tokio::spawn(async move {
            if let Ok((request, stream)) = resolver.resolve_request().await {
                let (send, recv) = stream.split();
                let _ = answer(app, request, send, recv).await;
            }
        });
    }
}

async fn answer(
    app: axum::Router,
    request: http::Request<()>,
    mut send: Send,
    recv: Recv,
) -> Result<(), Box<dyn std::error::Error + std::marker::Send + Sync>> {
    let body = futures_util::stream::unfold(recv, |mut recv| async move {
        match recv.recv_data().await {
            Ok(Some(mut chunk)) => Some((Ok(chunk.copy_to_bytes(chunk.remaining())), recv)),
            Ok(None) => None,
            Err(e) => Some((Err(e), recv)),
        }
    });
    let request = request.map(|()| Body::from_stream(body.boxed()));
    let response = app.oneshot(request).await?;
    let (parts, mut body) = response.into_parts();
    send.send_response(http::Response::from_parts(parts, ())).await?;
    while let Some(frame) = body.frame().await {
        match frame?.into_data() {
            Ok(data) => send.send_data(data).await?,
            Err(frame) => {
                if let Ok(trailers) = frame.into_trailers() {
                    send.send_trailers(trailers).await?;
                    return Ok(());
                }
            }
        }
    }
    send.finish().await?;
    Ok(())
}
