//! Sysctl names and the patterns of `allowedUnsafeSysctls`: which kernel namespace a sysctl
//! belongs to (only namespaced sysctls can be set per pod), and how a name written with `/`
//! separators reads. The config checks the node's patterns at load with [`SysctlPattern::parse`];
//! `sergeant_core::sysctls` decides per pod with them.

/// The kernel namespace a sysctl belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysctlNamespace {
    /// The IPC namespace (`kernel.shm*`, `kernel.msg*`, `kernel.sem`, `fs.mqueue.*`).
    Ipc,
    /// The network namespace (`net.*`).
    Net,
}

impl SysctlNamespace {
    /// The namespace of `name` (or of the names a prefix covers); `None` for a sysctl that is
    /// not namespaced, which a pod would change for the whole node.
    #[must_use]
    pub fn of(name: &str) -> Option<Self> {
        const IPC_PREFIXES: [&str; 4] = ["kernel.shm", "kernel.msg", "kernel.sem", "fs.mqueue."];
        if name.starts_with("net.") {
            Some(Self::Net)
        } else if IPC_PREFIXES.iter().any(|p| name.starts_with(p)) {
            Some(Self::Ipc)
        } else {
            None
        }
    }

    /// The pod setting that shares this namespace with the host, as upstream words it in
    /// "not allowed with host net enabled".
    #[must_use]
    pub fn host_flag(self) -> &'static str {
        match self {
            Self::Ipc => "IPC",
            Self::Net => "net",
        }
    }
}

/// Why an `allowedUnsafeSysctls` entry is refused when the configuration loads: it is not a
/// sysctl name or pattern, or it names sysctls a pod would change for the whole node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SysctlPatternError {
    /// Not a sysctl name or a `prefix*` pattern.
    #[error("{0:?} is not a sysctl name or a `prefix*` pattern")]
    Malformed(String),
    /// A sysctl (or prefix) not known to belong to a kernel namespace.
    #[error("{0:?} is not known to be namespaced: a pod would change it for the whole node")]
    NotNamespaced(String),
}

/// One allowed sysctl name, or a `prefix*` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlPattern {
    stem: String,
    prefix: bool,
    namespace: SysctlNamespace,
}

impl SysctlPattern {
    /// Reads `pattern` (`kernel.msgmax`, `kernel.msg*`, `net/core/somaxconn`).
    ///
    /// # Errors
    ///
    /// [`SysctlPatternError`] when it is not a sysctl name or `prefix*` pattern, or names
    /// sysctls not known to be namespaced.
    pub fn parse(pattern: &str) -> Result<Self, SysctlPatternError> {
        let normalized = normalize(pattern);
        let (stem, prefix) = match normalized.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (normalized.as_str(), false),
        };
        let valid = !stem.is_empty()
            && stem
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
        if !valid {
            return Err(SysctlPatternError::Malformed(pattern.to_owned()));
        }
        let namespace = SysctlNamespace::of(stem)
            .ok_or_else(|| SysctlPatternError::NotNamespaced(pattern.to_owned()))?;
        Ok(Self {
            stem: stem.to_owned(),
            prefix,
            namespace,
        })
    }

    /// The namespace of `name` (normalized) when this pattern allows it.
    #[must_use]
    pub fn allows(&self, name: &str) -> Option<SysctlNamespace> {
        let hit = if self.prefix {
            name.starts_with(&self.stem)
        } else {
            name == self.stem
        };
        hit.then_some(self.namespace)
    }
}

/// A sysctl name with `.` separators: one written with `/` separators (`net/ipv4/...`) has
/// its `/` and `.` swapped, as the `sysctl` tool reads it.
#[must_use]
pub fn normalize(name: &str) -> String {
    let first = name.find(['.', '/']);
    if first.is_some_and(|i| name.as_bytes()[i] == b'/') {
        name.chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                other => other,
            })
            .collect()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_names_or_prefixes_of_namespaced_sysctls() {
        let msg = SysctlPattern::parse("kernel.msg*").unwrap();
        assert_eq!(msg.allows("kernel.msgmax"), Some(SysctlNamespace::Ipc));
        assert_eq!(msg.allows("kernel.shmmax"), None);
        let somaxconn = SysctlPattern::parse("net/core/somaxconn").unwrap();
        assert_eq!(
            somaxconn.allows("net.core.somaxconn"),
            Some(SysctlNamespace::Net)
        );
        assert_eq!(somaxconn.allows("net.core.somaxconn2"), None);
        let err = SysctlPattern::parse("vm.swappiness").unwrap_err();
        assert_eq!(
            err,
            SysctlPatternError::NotNamespaced("vm.swappiness".into())
        );
        assert!(
            err.to_string().contains("not known to be namespaced"),
            "{err}"
        );
        for bad in ["*", "net.core.*x", "", "net core"] {
            assert_eq!(
                SysctlPattern::parse(bad),
                Err(SysctlPatternError::Malformed(bad.into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn slash_separated_names_are_read_as_dotted() {
        assert_eq!(
            normalize("net/ipv4/conf/eth0.100/forwarding"),
            "net.ipv4.conf.eth0/100.forwarding"
        );
        assert_eq!(normalize("net.ipv4.tcp_rmem"), "net.ipv4.tcp_rmem");
    }
}
