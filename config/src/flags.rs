//! Command-line settings: the ones only flags can set (`CommandLine`), and the flags that
//! override file settings (`FlagOverrides`). Flags win over the file, as upstream.

use std::net::IpAddr;
use std::path::PathBuf;

use serde::Serialize;

use crate::document::Documents;
use crate::endpoint::Endpoint;

/// The kubelet root directory when `--root-dir` is not given.
pub const DEFAULT_ROOT_DIR: &str = "/var/lib/kubelet";

/// The common kubelet flags as parsed by the binary; `None` means "not given". The binary's
/// CLI fills this and hands it to `NodeConfig::load`, so flag precedence lives in one place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagOverrides {
    /// `--kubeconfig`: API server credentials; absent means standalone mode.
    pub kubeconfig: Option<PathBuf>,
    /// `--hostname-override`: the node name instead of the machine hostname.
    pub hostname_override: Option<String>,
    /// `--container-runtime-endpoint`: overrides `containerRuntimeEndpoint`.
    pub container_runtime_endpoint: Option<Endpoint>,
    /// `--pod-manifest-path`: overrides `staticPodPath`.
    pub pod_manifest_path: Option<PathBuf>,
    /// `--root-dir`: the kubelet state directory.
    pub root_dir: Option<PathBuf>,
    /// `--node-ip`: the address the node reports.
    pub node_ip: Option<IpAddr>,
    /// `-v`: overrides `logging.verbosity`.
    pub verbosity: Option<u32>,
    /// `--cni-conf-dir`: the CNI configuration directory to check, instead of the one the
    /// runtime names.
    pub cni_conf_dir: Option<PathBuf>,
}

/// Settings that exist only as flags (upstream keeps them out of KubeletConfiguration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandLine {
    /// API server credentials; `None` means standalone mode (static pods only).
    pub kubeconfig: Option<PathBuf>,
    /// The node name to use instead of the machine hostname.
    pub hostname_override: Option<String>,
    /// The address the node reports; `None` means the first address of the default route.
    #[serde(rename = "nodeIP")]
    pub node_ip: Option<IpAddr>,
    /// The kubelet state directory (`/var/lib/kubelet`).
    pub root_dir: PathBuf,
    /// The CNI configuration directory the `cni-adapter` checks; `None` means the one the
    /// runtime names in its status, if any.
    pub cni_conf_dir: Option<PathBuf>,
}

/// Applies the flags over the parsed documents and returns the flag-only settings.
pub(crate) fn apply(flags: &FlagOverrides, documents: &mut Documents) -> CommandLine {
    let kubelet = &mut documents.kubelet;
    if let Some(endpoint) = &flags.container_runtime_endpoint {
        kubelet.container_runtime_endpoint.clone_from(endpoint);
    }
    if let Some(path) = &flags.pod_manifest_path {
        kubelet.static_pod_path = Some(path.clone());
    }
    if let Some(verbosity) = flags.verbosity {
        kubelet.logging.verbosity = verbosity;
    }
    CommandLine {
        kubeconfig: flags.kubeconfig.clone(),
        hostname_override: flags.hostname_override.clone(),
        node_ip: flags.node_ip,
        root_dir: flags
            .root_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_ROOT_DIR)),
        cni_conf_dir: flags.cni_conf_dir.clone(),
    }
}
