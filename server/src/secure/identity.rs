//! Who a request comes from: the user an authenticator established, as the API server would
//! name it in a SubjectAccessReview.

use x509_parser::prelude::{FromDer, X509Certificate};

/// Why a verified client certificate names no user: the request is answered 401 with this
/// text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertificateUserError {
    /// The certificate does not parse as X.509 (the parser's words).
    #[error("unreadable client certificate: {0}")]
    Unreadable(String),
    /// Its subject has no (or an empty) common name.
    #[error("the client certificate has no common name")]
    NoCommonName,
}

/// An authenticated (or anonymous) user.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct User {
    /// The user name (`system:node:n1`, `system:serviceaccount:ns:sa`, `system:anonymous`).
    pub name: String,
    /// Its groups.
    pub groups: Vec<String>,
    /// Its UID, when the authenticator gave one.
    pub uid: Option<String>,
}

impl User {
    /// The user of requests without credentials, when anonymous access is on.
    #[must_use]
    pub fn anonymous() -> Self {
        Self {
            name: "system:anonymous".to_owned(),
            groups: vec!["system:unauthenticated".to_owned()],
            uid: None,
        }
    }

    /// The user a verified client certificate names, as Kubernetes reads it: the subject's
    /// common name is the user, its organizations are the groups.
    ///
    /// # Errors
    /// [`CertificateUserError`]: why the certificate names no user.
    pub fn from_certificate(der: &[u8]) -> Result<Self, CertificateUserError> {
        let (_, certificate) = X509Certificate::from_der(der)
            .map_err(|e| CertificateUserError::Unreadable(e.to_string()))?;
        let subject = certificate.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .filter(|cn| !cn.is_empty())
            .ok_or(CertificateUserError::NoCommonName)?
            .to_owned();
        let mut groups: Vec<String> = subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok().map(str::to_owned))
            .collect();
        groups.push("system:authenticated".to_owned());
        Ok(Self {
            name,
            groups,
            uid: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};

    #[test]
    fn a_certificate_names_the_user_and_its_groups() {
        let mut params = CertificateParams::default();
        let mut subject = DistinguishedName::new();
        subject.push(DnType::CommonName, "system:node:n1");
        subject.push(DnType::OrganizationName, "system:nodes");
        params.distinguished_name = subject;
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let user = User::from_certificate(cert.der()).unwrap();
        assert_eq!(user.name, "system:node:n1");
        assert_eq!(user.groups, ["system:nodes", "system:authenticated"]);
    }

    #[test]
    fn a_certificate_without_a_common_name_names_nobody() {
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(
            User::from_certificate(cert.der()),
            Err(CertificateUserError::NoCommonName)
        );
        assert!(matches!(
            User::from_certificate(b"not a certificate"),
            Err(CertificateUserError::Unreadable(_))
        ));
    }
}
