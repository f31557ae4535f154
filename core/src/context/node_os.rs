//! [`NodeOs`]: which operating system's half of the CRI configuration a node sends.

/// The operating system a node runs, which decides whether pods get Linux settings (cgroups,
/// namespaces, capabilities) or Windows ones (job-object limits, `runAsUserName`, gMSA,
/// HostProcess) in their CRI configurations.
///
/// Exists as a value rather than a build switch so the Windows pod path is pure and tested on
/// Linux: a test builds a [`super::NodeContext`] with [`NodeOs::Windows`] and compares the CRI
/// requests field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOs {
    /// A Linux node: `linux` sections, pod cgroups.
    Linux,
    /// A Windows node: `windows` sections, no cgroups.
    Windows,
}

impl NodeOs {
    /// The operating system this binary was built for.
    #[must_use]
    pub fn of_this_build() -> Self {
        if std::env::consts::OS == "windows" {
            Self::Windows
        } else {
            Self::Linux
        }
    }

    /// Its Go name: the `kubernetes.io/os` label and `nodeInfo.operatingSystem` of the Node.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Windows => "windows",
        }
    }
}
