//! The TLS side of the kubelet API: the serving certificate (`tlsCertFile`/`tlsPrivateKeyFile`,
//! or a self-signed one made once and kept under `<root-dir>/pki`, as upstream) and the client
//! certificates it accepts (signed by `authentication.x509.clientCAFile`). A client without a
//! certificate still connects: it may carry a bearer token instead.

use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};

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
}

/// The server's TLS configuration, HTTP/1.1 only.
///
/// # Errors
/// What could not be read, parsed or generated, naming the file.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, String> {
    let (cert_file, key_file) = match (&settings.cert_file, &settings.key_file) {
        (Some(cert), Some(key)) => (cert.clone(), key.clone()),
        (None, None) => self_signed(settings)?,
        _ => {
            return Err(
                "tlsCertFile and tlsPrivateKeyFile go together: set both or neither".to_owned(),
            )
        }
    };
    let chain = CertificateDer::pem_file_iter(&cert_file)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| format!("{}: {e}", cert_file.display()))?;
    let key = PrivateKeyDer::from_pem_file(&key_file)
        .map_err(|e| format!("{}: {e}", key_file.display()))?;
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS server: {e}"))?;
    let builder = match &settings.client_ca_file {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in
                CertificateDer::pem_file_iter(ca).map_err(|e| format!("{}: {e}", ca.display()))?
            {
                let cert = cert.map_err(|e| format!("{}: {e}", ca.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("{}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("{}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| format!("{}: {e}", cert_file.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The self-signed certificate and key under the cert dir, made if missing.
fn self_signed(settings: &TlsSettings) -> Result<(PathBuf, PathBuf), String> {
    let cert = settings.cert_dir.join("kubelet.crt");
    let key = settings.cert_dir.join("kubelet.key");
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let (cert_pem, key_pem) = generate(&settings.node_name, settings.node_ip)?;
    fs::create_dir_all(&settings.cert_dir)
        .map_err(|e| format!("{}: {e}", settings.cert_dir.display()))?;
    write_private(&key, &key_pem)?;
    fs::write(&cert, cert_pem).map_err(|e| format!("{}: {e}", cert.display()))?;
    tracing::info!(cert = %cert.display(), "generated a self-signed serving certificate");
    Ok((cert, key))
}

fn generate(node_name: &str, node_ip: Option<IpAddr>) -> Result<(String, String), String> {
    let mut sans = vec![node_name.to_owned(), "localhost".to_owned()];
    sans.dedup();
    let mut params = CertificateParams::new(sans)
        .map_err(|e| format!("self-signed certificate for {node_name}: {e}"))?;
    let mut subject = DistinguishedName::new();
    subject.push(DnType::CommonName, format!("{node_name}-ca"));
    params.distinguished_name = subject;
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::from([127, 0, 0, 1])));
    if let Some(ip) = node_ip {
        params.subject_alt_names.push(SanType::IpAddress(ip));
    }
    let key = KeyPair::generate().map_err(|e| format!("generating a key: {e}"))?;
    let cert = params
        .self_signed(&key)
        .map_err(|e| format!("self-signed certificate for {node_name}: {e}"))?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn write_private(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
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
        assert!(server_config(&half).unwrap_err().contains("go together"));
        let mut missing_ca = settings(dir.path());
        missing_ca.client_ca_file = Some(dir.path().join("ca.crt"));
        assert!(server_config(&missing_ca).unwrap_err().contains("ca.crt"));
    }
}
