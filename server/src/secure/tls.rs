//! The TLS side of the kubelet API: the serving certificate (`tlsCertFile`/`tlsPrivateKeyFile`,
//! or a self-signed one made once and kept under `<root-dir>/pki`, as upstream) and the client
//! certificates it accepts (signed by `authentication.x509.clientCAFile`), and the protocol
//! versions and cipher suites it negotiates (`tlsMinVersion`, `tlsCipherSuites`). A client
//! without a certificate still connects: it may carry a bearer token instead.

use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
use sergeant_config::kubelet::TlsVersion;
use sergeant_config::CipherSuite;
use tokio_rustls::rustls::crypto::{ring, CryptoProvider};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{
    self, RootCertStore, ServerConfig, SupportedCipherSuite, SupportedProtocolVersion,
};

/// Why the kubelet API's TLS configuration could not be built: the setting or the file at
/// fault and why, so the listener's failure (and each restart's) tells the operator what to
/// fix.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TlsError {
    /// Only one of `tlsCertFile` and `tlsPrivateKeyFile` is set.
    #[error("tlsCertFile and tlsPrivateKeyFile go together: set both or neither")]
    HalfPair,
    /// A certificate, key or CA file (or the directory of the self-signed pair) could not be
    /// read, written or used.
    #[error("{}: {reason}", .path.display())]
    File {
        /// The file or directory.
        path: PathBuf,
        /// Why (the I/O, PEM or TLS library's words).
        reason: String,
    },
    /// A `tlsMinVersion` rustls cannot serve.
    #[error("tlsMinVersion: {0:?} cannot be served: rustls speaks TLS 1.2 and 1.3 only")]
    MinVersion(TlsVersion),
    /// The protocol versions and cipher suites make no server configuration.
    #[error("TLS server: {0}")]
    Protocol(String),
    /// The self-signed certificate could not be made.
    #[error("self-signed certificate for {node_name}: {reason}")]
    SelfSigned {
        /// The node it is for.
        node_name: String,
        /// Why.
        reason: String,
    },
    /// The self-signed certificate's key could not be generated.
    #[error("generating a key: {0}")]
    KeyGeneration(String),
}

impl TlsError {
    /// A [`TlsError::File`] error.
    fn file(path: &Path, reason: impl std::fmt::Display) -> Self {
        TlsError::File {
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }
}

/// Where the certificates come from.
#[derive(Debug, Clone)]
pub struct TlsSettings {
    /// `tlsCertFile`; with the key file, the serving certificate.
    pub cert_file: Option<PathBuf>,
    /// `tlsPrivateKeyFile`.
    pub key_file: Option<PathBuf>,
    /// `authentication.x509.clientCAFile`; none turns client certificates off.
    pub client_ca_file: Option<PathBuf>,
    /// Where a self-signed serving certificate is kept (`<root-dir>/pki`).
    pub cert_dir: PathBuf,
    /// The node's name, in the self-signed certificate.
    pub node_name: String,
    /// The node's address, in the self-signed certificate.
    pub node_ip: Option<IpAddr>,
    /// `tlsMinVersion`; none means TLS 1.2.
    pub min_version: Option<TlsVersion>,
    /// `tlsCipherSuites`; empty means every suite rustls offers.
    pub cipher_suites: Vec<CipherSuite>,
}

/// The server's TLS configuration, HTTP/1.1 only.
///
/// # Errors
/// [`TlsError`]: what could not be read, parsed or generated, naming the file; a minimum
/// version rustls cannot serve.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, TlsError> {
    let (cert_file, key_file) = match (&settings.cert_file, &settings.key_file) {
        (Some(cert), Some(key)) => (cert.clone(), key.clone()),
        (None, None) => self_signed(settings)?,
        _ => return Err(TlsError::HalfPair),
    };
    let chain = CertificateDer::pem_file_iter(&cert_file)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| TlsError::file(&cert_file, e))?;
    let key = PrivateKeyDer::from_pem_file(&key_file).map_err(|e| TlsError::file(&key_file, e))?;
    let versions = protocol_versions(settings.min_version)?;
    let provider = Arc::new(provider(&settings.cipher_suites));
    tracing::info!(
        versions = ?versions.iter().map(|v| v.version).collect::<Vec<_>>(),
        cipher_suites = ?provider.cipher_suites.iter().map(SupportedCipherSuite::suite).collect::<Vec<_>>(),
        "kubelet API TLS parameters"
    );
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .map_err(|e| TlsError::Protocol(e.to_string()))?;
    let builder = match &settings.client_ca_file {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(ca).map_err(|e| TlsError::file(ca, e))? {
                let cert = cert.map_err(|e| TlsError::file(ca, e))?;
                roots.add(cert).map_err(|e| TlsError::file(ca, e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| TlsError::file(ca, e))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::file(&cert_file, e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// TLS 1.3 alone, for `tlsMinVersion: VersionTLS13`.
static TLS13_ONLY: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

/// The versions from `min` up: TLS 1.3 alone, or 1.3 and 1.2.
fn protocol_versions(
    min: Option<TlsVersion>,
) -> Result<&'static [&'static SupportedProtocolVersion], TlsError> {
    match min {
        None | Some(TlsVersion::VersionTLS12) => Ok(rustls::ALL_VERSIONS),
        Some(TlsVersion::VersionTLS13) => Ok(&TLS13_ONLY),
        Some(other) => Err(TlsError::MinVersion(other)),
    }
}

/// The ring provider limited to `named` suites, in their order; the TLS 1.3 suites all stay
/// when `named` has none of them (as upstream, whose TLS 1.3 suites are not configurable).
fn provider(named: &[CipherSuite]) -> CryptoProvider {
    let mut provider = ring::default_provider();
    if named.is_empty() {
        return provider;
    }
    let keep_tls13 = !named
        .iter()
        .any(|suite| suite.version() == TlsVersion::VersionTLS13);
    let available = std::mem::take(&mut provider.cipher_suites);
    let find = |wanted: rustls::CipherSuite| available.iter().find(|s| s.suite() == wanted);
    provider.cipher_suites = named
        .iter()
        .filter_map(|suite| find(rustls_suite(*suite)))
        .chain(
            available
                .iter()
                .filter(|s| keep_tls13 && matches!(s, SupportedCipherSuite::Tls13(_))),
        )
        .copied()
        .collect();
    provider
}

/// The IANA suite `suite` names (Go's names are the IANA names).
fn rustls_suite(suite: CipherSuite) -> rustls::CipherSuite {
    use rustls::CipherSuite as R;
    match suite {
        CipherSuite::Aes128GcmSha256 => R::TLS13_AES_128_GCM_SHA256,
        CipherSuite::Aes256GcmSha384 => R::TLS13_AES_256_GCM_SHA384,
        CipherSuite::Chacha20Poly1305Sha256 => R::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::EcdheEcdsaAes128GcmSha256 => R::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::EcdheEcdsaAes256GcmSha384 => R::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::EcdheEcdsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        CipherSuite::EcdheRsaAes128GcmSha256 => R::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::EcdheRsaAes256GcmSha384 => R::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::EcdheRsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
    }
}

/// The self-signed certificate and key under the cert dir, made if missing.
fn self_signed(settings: &TlsSettings) -> Result<(PathBuf, PathBuf), TlsError> {
    let cert = settings.cert_dir.join("kubelet.crt");
    let key = settings.cert_dir.join("kubelet.key");
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let (cert_pem, key_pem) = generate(&settings.node_name, settings.node_ip)?;
    fs::create_dir_all(&settings.cert_dir).map_err(|e| TlsError::file(&settings.cert_dir, e))?;
    write_private(&key, &key_pem)?;
    fs::write(&cert, cert_pem).map_err(|e| TlsError::file(&cert, e))?;
    tracing::info!(cert = %cert.display(), "generated a self-signed serving certificate");
    Ok((cert, key))
}

fn generate(node_name: &str, node_ip: Option<IpAddr>) -> Result<(String, String), TlsError> {
    let self_signed = |e: rcgen::Error| TlsError::SelfSigned {
        node_name: node_name.to_owned(),
        reason: e.to_string(),
    };
    let mut sans = vec![node_name.to_owned(), "localhost".to_owned()];
    sans.dedup();
    let mut params = CertificateParams::new(sans).map_err(self_signed)?;
    let mut subject = DistinguishedName::new();
    subject.push(DnType::CommonName, format!("{node_name}-ca"));
    params.distinguished_name = subject;
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::from([127, 0, 0, 1])));
    if let Some(ip) = node_ip {
        params.subject_alt_names.push(SanType::IpAddress(ip));
    }
    let key = KeyPair::generate().map_err(|e| TlsError::KeyGeneration(e.to_string()))?;
    let cert = params.self_signed(&key).map_err(self_signed)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn write_private(path: &Path, text: &str) -> Result<(), TlsError> {
    use std::io::Write;
    let mut file = sergeant_host::file_mode::create_file_with_mode(
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
        0o600,
    )
    .open(path)
    .map_err(|e| TlsError::file(path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| TlsError::file(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(dir: &Path) -> TlsSettings {
        TlsSettings {
            cert_file: None,
            key_file: None,
            client_ca_file: None,
            cert_dir: dir.join("pki"),
            node_name: "n1".to_owned(),
            node_ip: None,
            min_version: None,
            cipher_suites: Vec::new(),
        }
    }

    #[test]
    fn a_self_signed_certificate_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        server_config(&settings(dir.path())).unwrap();
        let cert = dir.path().join("pki/kubelet.crt");
        let first = fs::read(&cert).unwrap();
        server_config(&settings(dir.path())).unwrap();
        assert_eq!(fs::read(&cert).unwrap(), first, "kept across starts");
    }

    #[test]
    fn half_a_pair_or_a_missing_ca_is_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut half = settings(dir.path());
        half.cert_file = Some(dir.path().join("x.crt"));
        let error = server_config(&half).unwrap_err();
        assert!(matches!(error, TlsError::HalfPair), "{error:?}");
        assert!(error.to_string().contains("go together"));
        let mut missing_ca = settings(dir.path());
        let ca = dir.path().join("ca.crt");
        missing_ca.client_ca_file = Some(ca.clone());
        let error = server_config(&missing_ca).unwrap_err();
        assert!(
            matches!(error, TlsError::File { ref path, .. } if *path == ca),
            "{error:?}"
        );
        assert!(error.to_string().contains("ca.crt"));
    }

    #[test]
    fn every_configurable_suite_is_one_rustls_serves() {
        let offered: Vec<_> = ring::default_provider()
            .cipher_suites
            .iter()
            .map(SupportedCipherSuite::suite)
            .collect();
        for suite in CipherSuite::ALL {
            assert!(offered.contains(&rustls_suite(suite)), "{suite}");
            assert_eq!(
                provider(&[suite]).cipher_suites[0].suite(),
                rustls_suite(suite)
            );
        }
    }

    #[test]
    fn named_suites_limit_the_provider_and_tls13_stays_unless_named() {
        let suites = |named: &[CipherSuite]| -> Vec<_> {
            provider(named)
                .cipher_suites
                .iter()
                .map(SupportedCipherSuite::suite)
                .collect()
        };
        assert_eq!(
            suites(&[CipherSuite::EcdheRsaAes256GcmSha384]),
            [
                rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
                rustls::CipherSuite::TLS13_AES_256_GCM_SHA384,
                rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
                rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            ]
        );
        assert_eq!(
            suites(&[
                CipherSuite::Chacha20Poly1305Sha256,
                CipherSuite::EcdheEcdsaAes128GcmSha256
            ]),
            [
                rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
                rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            ]
        );
        assert_eq!(
            protocol_versions(Some(TlsVersion::VersionTLS13))
                .unwrap()
                .len(),
            1
        );
        assert!(protocol_versions(Some(TlsVersion::VersionTLS11))
            .unwrap_err()
            .to_string()
            .starts_with("tlsMinVersion: VersionTLS11"));
    }
}
