//! Who a request comes from: the user an authenticator established, as the API server would
//! name it in a SubjectAccessReview.

use x509_parser::prelude::{FromDer, X509Certificate};

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
    /// Why the certificate names no user.
    pub fn from_certificate(der: &[u8]) -> Result<Self, String> {
        let (_, certificate) = X509Certificate::from_der(der)
            .map_err(|e| format!("unreadable client certificate: {e}"))?;
        let subject = certificate.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .filter(|cn| !cn.is_empty())
            .ok_or("the client certificate has no common name")?
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
        assert!(User::from_certificate(cert.der()).is_err());
    }
}
