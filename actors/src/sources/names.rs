//! The name formats Kubernetes objects use, checked with reasons an operator can act on:
//! RFC 1123 labels (container, volume and namespace names), RFC 1123 subdomains (pod names)
//! and IANA service names (port names).

const MAX_SUBDOMAIN: usize = 253;
const MAX_LABEL: usize = 63;
const MAX_PORT_NAME: usize = 15;

/// Why `name` is not an RFC 1123 label (lowercase alphanumerics and `-`, at most 63
/// characters, alphanumeric at both ends).
pub(crate) fn label_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("required: must not be empty".to_owned());
    }
    if name.len() > MAX_LABEL {
        return Some(format!(
            "\"{name}\" must be no more than {MAX_LABEL} characters"
        ));
    }
    (!is_label(name)).then(|| {
        format!(
            "\"{name}\" is not a valid name: lowercase letters, digits and '-', \
             starting and ending with a letter or digit (RFC 1123 label)"
        )
    })
}

/// Why `name` is not an RFC 1123 subdomain (labels joined by `.`, at most 253 characters).
pub(crate) fn subdomain_problem(name: &str) -> Option<String> {
    if name.len() > MAX_SUBDOMAIN {
        return Some(format!(
            "\"{name}\" must be no more than {MAX_SUBDOMAIN} characters"
        ));
    }
    (!name.split('.').all(is_label)).then(|| {
        format!(
            "\"{name}\" is not a valid name: lowercase letters, digits, '-' and '.', \
             starting and ending with a letter or digit (RFC 1123 subdomain)"
        )
    })
}

fn is_label(part: &str) -> bool {
    let bytes = part.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    edge(bytes.first())
        && edge(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// Why `name` is not a valid port name (IANA service name: at most 15 lowercase
/// alphanumerics and `-`, at least one letter, no `--`, alphanumeric at both ends).
pub(crate) fn port_name_problem(name: &str) -> Option<String> {
    let valid = name.len() <= MAX_PORT_NAME
        && is_label(name)
        && !name.contains("--")
        && name.bytes().any(|b| b.is_ascii_lowercase());
    (!valid).then(|| {
        format!(
            "\"{name}\" is not a valid port name: at most 15 lowercase letters, digits and '-', \
             with at least one letter"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(label_problem("web-1"), None);
        assert!(label_problem("Web").is_some());
        assert!(label_problem("-web").is_some());
        assert!(label_problem("a.b").is_some());
        assert!(label_problem(&"a".repeat(64)).unwrap().contains("63"));
        assert!(label_problem("").unwrap().starts_with("required"));
    }

    #[test]
    fn subdomains() {
        assert_eq!(subdomain_problem("kube-apiserver.node-1"), None);
        assert!(subdomain_problem("a..b").is_some());
        assert!(subdomain_problem("a_b").is_some());
        assert!(subdomain_problem(&"a".repeat(254)).unwrap().contains("253"));
    }

    #[test]
    fn port_names() {
        assert_eq!(port_name_problem("http-alt"), None);
        assert!(port_name_problem("8080").is_some());
        assert!(port_name_problem("a--b").is_some());
        assert!(port_name_problem("abcdefghijklmnop").is_some());
    }
}
