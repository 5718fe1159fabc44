//! A TLS client for the servers' self-signed certificates: any certificate is
//! accepted (the handshake signatures are still checked), ALPN h2.

use callbench_engine::net::tls::AnyCertificate;
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// TLS to `addr` as `localhost`, negotiating h2.
pub async fn connect(addr: SocketAddr) -> TlsStream<TcpStream> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate::new(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = TcpStream::connect(addr).await.expect("connects");
    let name = ServerName::try_from("localhost").expect("a server name");
    let tls = TlsConnector::from(Arc::new(config)).connect(name, tcp).await.expect("TLS handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]), "the server negotiates h2");
    tls
}
