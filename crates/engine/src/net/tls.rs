//! TLS client settings (rustls, ring): web PKI roots plus any `--cacert`, or no verification at all
//! with `--insecure` (self-signed reference servers). The handshake's signatures are still checked.
//! A server that presents a certificate given in `--cacert` itself is trusted, as curl trusts it:
//! `openssl req -x509` makes a CA certificate (CA:TRUE), often without a subjectAltName, which the
//! web PKI refuses as a server's own.

use crate::EngineError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// Accept any certificate (self-signed, wrong name, expired).
    pub insecure: bool,
    /// Extra trusted CA certificates (PEM).
    pub ca_file: Option<std::path::PathBuf>,
    /// The client's certificate chain and its private key (PEM), for a server that asks for one
    /// (mutual TLS).
    pub client_cert: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// Offer only this TLS version; None: 1.3 and 1.2, as browsers do (the server picks, 1.3 when
    /// it can).
    pub version: Option<TlsVersion>,
    /// Resume sessions across connections (tickets, session ids): the shorter handshake of a
    /// returning client. Off: every connection a full handshake, as a new client's.
    pub resume: bool,
}

/// A TLS version the client can be held to: 1.2's handshake takes two round trips, 1.3's one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    V1_2,
    V1_3,
}

impl std::str::FromStr for TlsVersion {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, EngineError> {
        match s {
            "1.2" => Ok(TlsVersion::V1_2),
            "1.3" => Ok(TlsVersion::V1_3),
            _ => Err(EngineError::Settings(format!("unknown TLS version {s:?}: 1.2 or 1.3"))),
        }
    }
}

impl std::fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TlsVersion::V1_2 => "1.2",
            TlsVersion::V1_3 => "1.3",
        })
    }
}

/// A client config offering `alpn` (e.g. `h2` or `http/1.1`); a CA, certificate or key file that
/// cannot be used is an [`EngineError::Settings`].
pub fn client_config(options: &TlsOptions, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, EngineError> {
    config(options, alpn).map_err(EngineError::Settings)
}

fn config(options: &TlsOptions, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = match options.version {
        None => rustls::DEFAULT_VERSIONS,
        Some(TlsVersion::V1_2) => &[&rustls::version::TLS12],
        Some(TlsVersion::V1_3) => &[&rustls::version::TLS13],
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    let verified = if options.insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate::new(provider)))
    } else {
        let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        let given = match &options.ca_file {
            Some(file) => {
                let certs = read_pem_certs(file)?;
                for cert in &certs {
                    roots
                        .add(cert.clone())
                        .map_err(|e| format!("{}: not a usable CA certificate: {e}", file.display()))?;
                }
                certs
            }
            None => vec![],
        };
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| format!("TLS set-up failed: {e}"))?;
        builder.dangerous().with_custom_certificate_verifier(Arc::new(WebPkiOrGiven { webpki, given }))
    };
    let mut config = match &options.client_cert {
        None => verified.with_no_client_auth(),
        Some((cert, key)) => {
            use rustls::pki_types::{pem::PemObject, PrivateKeyDer};
            let chain = read_pem_certs(cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("{}: no usable private key (PEM): {e}", key.display()))?;
            verified
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("{}: the client certificate and key do not go together: {e}", cert.display()))?
        }
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    if !options.resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Ok(Arc::new(config))
}

fn read_pem_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let certs: Result<Vec<_>, _> =
        CertificateDer::pem_file_iter(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?.collect();
    let certs = certs.map_err(|e| format!("{}: bad PEM: {e}", file.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate found", file.display()));
    }
    Ok(certs)
}

/// The web PKI's verdict, except that a server presenting one of the `--cacert` certificates
/// itself is trusted for it (its key is still proven by the handshake's signatures), unless the
/// web PKI found it expired or not yet valid.
#[derive(Debug)]
struct WebPkiOrGiven {
    webpki: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for WebPkiOrGiven {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        use rustls::CertificateError::{Expired, ExpiredContext, NotValidYet, NotValidYetContext};
        let verdict = self.webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        let dated = matches!(
            &verdict,
            Err(rustls::Error::InvalidCertificate(
                Expired | ExpiredContext { .. } | NotValidYet | NotValidYetContext { .. }
            ))
        );
        match verdict {
            Err(_) if !dated && self.given.iter().any(|g| g.as_ref() == end_entity.as_ref()) => {
                Ok(ServerCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Trusts any certificate, but checks that the server holds its key (the handshake's signatures).
/// Shared with the tests' TLS clients.
#[derive(Debug)]
pub struct AnyCertificate(Arc<CryptoProvider>);

impl AnyCertificate {
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        AnyCertificate(provider)
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
