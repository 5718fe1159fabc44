//! `--tls`: a self-signed certificate made at start (a fresh key every time) and the
//! rustls server configuration every Rust reference server uses with it.
//!
//! The crypto provider is ring (not aws-lc-rs: no cmake/clang build on a fresh machine).
//! TLS 1.2 and 1.3 are both offered; the client picks.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// The names the certificate is valid for (subject alternative names).
pub const NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A connection whose TLS handshake takes longer than this is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// ALPN protocol ids.
pub const ALPN_H2: &[u8] = b"h2";
pub const ALPN_HTTP1: &[u8] = b"http/1.1";

/// A self-signed certificate for [`NAMES`] and its private key, in DER and PEM.
pub struct SelfSigned {
    cert_der: CertificateDer<'static>,
    key_der: Vec<u8>,
    /// The certificate, PEM (for frameworks that take PEM, e.g. tonic's `Identity`).
    pub cert_pem: String,
    /// The private key (PKCS#8), PEM.
    pub key_pem: String,
}

impl SelfSigned {
    /// A new certificate with a new ECDSA P-256 key, `CN=localhost`, SANs [`NAMES`].
    pub fn generate() -> Result<SelfSigned, rcgen::Error> {
        let mut params = rcgen::CertificateParams::new(NAMES.map(String::from).to_vec())?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(rcgen::DnType::CommonName, "localhost");
        params.distinguished_name.push(rcgen::DnType::OrganizationName, "callbench (self-signed)");
        let key = rcgen::KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        Ok(SelfSigned {
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The certificate in DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// SHA-256 of the certificate (DER), as `openssl x509 -fingerprint -sha256` writes it: `AB:12:...`.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.cert_der.as_ref());
        digest.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
    }

    /// A rustls server configuration serving this certificate, TLS 1.2 and 1.3, ring, no client
    /// authentication, offering these ALPN protocols (in order of preference).
    pub fn server_config(&self, alpn: &[&[u8]]) -> Result<rustls::ServerConfig, rustls::Error> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()));
        let mut config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
                .with_no_client_auth()
                .with_single_cert(vec![self.cert_der.clone()], key)?;
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(config)
    }
}

/// What a server calls for `--tls`: makes ring the process's default crypto provider (for
/// frameworks that build their own rustls configuration, such as tonic), makes a certificate
/// and prints its fingerprint on stderr (one line); exits with a one-line message on failure.
pub fn self_signed() -> SelfSigned {
    // Err means a provider is already installed (ours, from an earlier call): fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cert = SelfSigned::generate().unwrap_or_else(|e| crate::fail::fail(format!("cannot make a certificate: {e}")));
    eprintln!("tls: self-signed certificate for {}, SHA-256 fingerprint {}", NAMES.join(", "), cert.fingerprint());
    cert
}

/// [`SelfSigned::server_config`], or exits with a one-line message.
pub fn server_config(cert: &SelfSigned, alpn: &[&[u8]]) -> rustls::ServerConfig {
    cert.server_config(alpn).unwrap_or_else(|e| crate::fail::fail(format!("cannot set up TLS: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_certificate_has_a_fresh_key() {
        let (a, b) = (SelfSigned::generate().unwrap(), SelfSigned::generate().unwrap());
        assert_ne!(a.key_pem, b.key_pem);
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint().len(), 32 * 3 - 1);
        assert!(a.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(a.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn the_config_offers_tls12_and_tls13_and_the_given_alpn() {
        let config = SelfSigned::generate().unwrap().server_config(&[ALPN_H2, ALPN_HTTP1]).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        let suites = &config.crypto_provider().cipher_suites;
        assert!(suites.iter().any(|s| s.version() == &rustls::version::TLS12));
        assert!(suites.iter().any(|s| s.version() == &rustls::version::TLS13));
    }

    /// A rustls client that trusts only this certificate accepts it for every name in `NAMES`.
    #[test]
    fn the_certificate_verifies_for_every_name_as_its_own_root() {
        use rustls::client::danger::ServerCertVerifier;
        use rustls::pki_types::{ServerName, UnixTime};
        let cert = SelfSigned::generate().unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.cert_der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build().unwrap();
        for name in NAMES {
            let name = ServerName::try_from(name).unwrap();
            verifier.verify_server_cert(cert.cert_der(), &[], &name, &[], UnixTime::now()).unwrap();
        }
        let other = ServerName::try_from("example.com").unwrap();
        assert!(verifier.verify_server_cert(cert.cert_der(), &[], &other, &[], UnixTime::now()).is_err());
    }
}
