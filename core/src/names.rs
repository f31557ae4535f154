//! The name formats Kubernetes objects use, checked with reasons an operator can act on:
//! RFC 1123 labels (container, volume and namespace names), RFC 1123 subdomains (pod names),
//! IANA service names (port names), qualified names (label and annotation keys), label
//! values, and relative paths that stay below where they start. Names are quoted in the reasons clipped ([`quoted`]), however long they are.

/// Why `path` is not a relative path that stays below where it starts (a subPath, a seccomp
/// `localhostProfile`): upstream's rule for paths a pod author names under a directory of the
/// node's.
#[must_use]
pub fn descending_path_problem(path: &str) -> Option<&'static str> {
    if path.starts_with('/') {
        Some("must be a relative path")
    } else if path.split('/').any(|part| part == "..") {
        Some("must not contain '..'")
    } else if path.contains('\0') {
        Some("must not contain a NUL character")
    } else {
        None
    }
}

/// How much of a value an error message quotes, in characters: a manifest may hold a value
/// of megabytes, and a message must stay readable.
pub const MAX_QUOTED_CHARS: usize = 64;

const MAX_SUBDOMAIN: usize = 253;
const MAX_LABEL: usize = 63;
const MAX_PORT_NAME: usize = 15;
/// The longest name part of a qualified name, and the longest label value.
const MAX_NAME_PART: usize = 63;

/// Why `name` is not an RFC 1123 label (lowercase alphanumerics and `-`, at most 63
/// characters, alphanumeric at both ends).
pub fn label_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("required: must not be empty".to_owned());
    }
    if name.len() > MAX_LABEL {
        return Some(format!(
            "{} must be no more than {MAX_LABEL} characters",
            quoted(name)
        ));
    }
    (!is_label(name)).then(|| {
        format!(
            "{} is not a valid name: lowercase letters, digits and '-', \
             starting and ending with a letter or digit (RFC 1123 label)",
            quoted(name)
        )
    })
}

/// Why `name` is not an RFC 1123 subdomain (labels joined by `.`, at most 253 characters).
pub fn subdomain_problem(name: &str) -> Option<String> {
    if name.len() > MAX_SUBDOMAIN {
        return Some(format!(
            "{} must be no more than {MAX_SUBDOMAIN} characters",
            quoted(name)
        ));
    }
    (!name.split('.').all(is_label)).then(|| {
        format!(
            "{} is not a valid name: lowercase letters, digits, '-' and '.', \
             starting and ending with a letter or digit (RFC 1123 subdomain)",
            quoted(name)
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
pub fn port_name_problem(name: &str) -> Option<String> {
    let valid = name.len() <= MAX_PORT_NAME
        && is_label(name)
        && !name.contains("--")
        && name.bytes().any(|b| b.is_ascii_lowercase());
    (!valid).then(|| {
        format!(
            "{} is not a valid port name: at most 15 lowercase letters, digits and '-', \
             with at least one letter",
            quoted(name)
        )
    })
}

/// Why `key` is not a qualified name (a label or annotation key): an optional RFC 1123
/// subdomain prefix and `/`, then a name part of at most 63 letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
pub fn qualified_name_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        None => (None, key),
        Some((_, rest)) if rest.contains('/') => {
            return Some(format!(
            "{} is not a valid key: at most one '/', between a DNS subdomain prefix and the name",
            quoted(key)
        ))
        }
        Some((prefix, name)) => (Some(prefix), name),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some(format!(
                "{}: the prefix before '/' must not be empty",
                quoted(key)
            ));
        }
        if let Some(reason) = subdomain_problem(prefix) {
            return Some(format!("the prefix of {}: {reason}", quoted(key)));
        }
    }
    if name.is_empty() {
        return Some(format!("{}: the name part must not be empty", quoted(key)));
    }
    name_part_problem(name).map(|reason| format!("the name part of {}: {reason}", quoted(key)))
}

/// Why `value` is not a label value: empty, or at most 63 letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    name_part_problem(value).map(|reason| format!("{}: {reason}", quoted(value)))
}

/// Why a non-empty `part` is not the name part of a qualified name.
fn name_part_problem(part: &str) -> Option<String> {
    if part.len() > MAX_NAME_PART {
        return Some(format!("must be no more than {MAX_NAME_PART} characters"));
    }
    let bytes = part.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    let valid = edge(bytes.first()) && edge(bytes.last()) && bytes.iter().all(inner);
    (!valid).then(|| {
        "must consist of letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
            .to_owned()
    })
}

/// `value` in double quotes for an error message, clipped to its first characters when long
/// (with its full length), so a huge value cannot make a huge message.
pub fn quoted(value: &str) -> String {
    match cut(value, MAX_QUOTED_CHARS) {
        (whole, false) => format!("{whole:?}"),
        (start, true) => format!("{start:?}... ({} bytes)", value.len()),
    }
}

/// `text`'s first `max` characters, and whether that is less than all of it.
#[must_use]
pub fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        None => (text, false),
        Some((end, _)) => (&text[..end], true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::random_strings;

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
    fn qualified_names_at_and_past_their_limits() {
        let name = |n: usize| format!("a{}", "b".repeat(n - 1));
        let prefix = |n: usize| format!("{}.io", "a".repeat(n - 3));
        for good in [
            "app",
            "App_1.x-Y",
            "a",
            "example.com/MyName",
            &name(63),
            &format!("{}/{}", prefix(253), name(63)),
        ] {
            assert_eq!(qualified_name_problem(good), None, "{good}");
        }
        for (bad, why) in [
            (name(64), "no more than 63"),
            (format!("{}/a", prefix(254)), "no more than 253"),
            ("a b/c d".to_owned(), "RFC 1123 subdomain"),
            ("Example.com/a".to_owned(), "RFC 1123 subdomain"),
            ("a/b/c".to_owned(), "at most one '/'"),
            ("/a".to_owned(), "prefix before '/' must not be empty"),
            ("a/".to_owned(), "name part must not be empty"),
            (String::new(), "name part must not be empty"),
            ("-a".to_owned(), "starting and ending"),
            ("a_".to_owned(), "starting and ending"),
            ("a:b".to_owned(), "letters, digits"),
        ] {
            let reason = qualified_name_problem(&bad).unwrap_or_default();
            assert!(reason.contains(why), "{bad:?}: {reason}");
        }
    }

    #[test]
    fn label_values_at_and_past_their_limit() {
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("v1.2_x-Y"), None);
        assert_eq!(label_value_problem(&"v".repeat(63)), None);
        assert!(label_value_problem(&"v".repeat(64))
            .unwrap()
            .contains("no more than 63"));
        assert!(label_value_problem(&"v".repeat(300)).is_some());
        assert!(label_value_problem("a b").is_some());
        assert!(label_value_problem(".a").is_some());
    }

    #[test]
    fn long_names_are_quoted_clipped() {
        assert_eq!(quoted("web"), "\"web\"");
        let long = "x".repeat(100_000);
        let shown = quoted(&long);
        assert!(shown.len() < 100, "{shown}");
        assert!(shown.ends_with("... (100000 bytes)"), "{shown}");
        assert!(label_problem(&long).unwrap().len() < 150);
    }

    /// The name rules against a plain reading of their grammar, on random strings over the
    /// characters that matter.
    #[test]
    fn random_names_agree_with_the_grammar() {
        let alphabet = ["a", "Z", "0", "9", "-", "_", ".", "/", " "];
        for text in random_strings(&alphabet, 12, 20_000, 0x2545_f491_4f6c_dd1d) {
            let part_ok = |p: &str| {
                let b = p.as_bytes();
                !b.is_empty()
                    && b[0].is_ascii_alphanumeric()
                    && b[b.len() - 1].is_ascii_alphanumeric()
                    && b.iter()
                        .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
            };
            let dns_ok = |p: &str| {
                p.split('.').all(|l| {
                    let b = l.as_bytes();
                    !b.is_empty()
                        && b.iter()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                        && b[0] != b'-'
                        && b[b.len() - 1] != b'-'
                })
            };
            let expected = match text.split('/').collect::<Vec<_>>()[..] {
                [name] => part_ok(name),
                [prefix, name] => dns_ok(prefix) && part_ok(name),
                _ => false,
            };
            assert_eq!(
                qualified_name_problem(&text).is_none(),
                expected,
                "{text:?}"
            );
            assert_eq!(
                label_value_problem(&text).is_none(),
                text.is_empty() || part_ok(&text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn port_names() {
        assert_eq!(port_name_problem("http-alt"), None);
        assert!(port_name_problem("8080").is_some());
        assert!(port_name_problem("a--b").is_some());
        assert!(port_name_problem("abcdefghijklmnop").is_some());
    }

    #[test]
    fn descending_paths() {
        for good in ["a", "a/b", "a/..b/c", "...", "a/./b", "$(POD_NAME)/logs"] {
            assert_eq!(descending_path_problem(good), None, "{good}");
        }
        assert_eq!(
            descending_path_problem("/etc"),
            Some("must be a relative path")
        );
        for bad in ["..", "../../etc", "a/../b", "a/.."] {
            assert_eq!(
                descending_path_problem(bad),
                Some("must not contain '..'"),
                "{bad}"
            );
        }
    }
}
