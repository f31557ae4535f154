//! The TLS client of HTTPS hooks and probes. As upstream, the container's certificate is not
//! verified: the check is about the endpoint answering, and pod certificates are rarely issued
//! for pod IPs.

use std::sync::{Arc, OnceLock};

use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{ClientConfig, DigitallySignedStruct, Error, SignatureScheme};
use tokio_rustls::TlsConnector;

/// Why the TLS client of HTTPS hooks and probes could not be set up (the TLS library offers
/// no safe protocol version with its provider); kept once for the process, so `Clone`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TLS client: {reason}")]
pub struct TlsClientError {
    /// The TLS library's reason.
    pub reason: String,
}

/// The connector every HTTPS hook and probe shares.
///
/// # Errors
/// [`TlsClientError`] when the TLS library offers no safe protocol version.
pub fn connector() -> Result<TlsConnector, TlsClientError> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, TlsClientError>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let provider = Arc::new(ring::default_provider());
        let config = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsClientError {
                reason: e.to_string(),
            })?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth();
        Ok(Arc::new(config))
    });
    config.clone().map(TlsConnector::from)
}

/// Accepts any server certificate, but still checks the handshake signatures with the
/// provider's algorithms, so the connection itself is sound.
#[derive(Debug)]
struct AnyCertificate(Arc<tokio_rustls::rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
