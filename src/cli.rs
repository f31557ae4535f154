//! The command line: the configuration file and the common kubelet flags that override it.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Parser;
use sergeant_config::{Endpoint, FlagOverrides};

/// sergeant, a Kubernetes node agent. Flags override the configuration file.
#[derive(Debug, Parser)]
#[command(name = "sergeant", version, about)]
pub struct Cli {
    /// The KubeletConfiguration file (optionally followed by a SergeantConfiguration document).
    #[arg(long)]
    pub config: PathBuf,
    /// Kubeconfig for the API server; without it sergeant runs standalone (static pods only).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The node name to use instead of the hostname.
    #[arg(long)]
    pub hostname_override: Option<String>,
    /// The CRI runtime endpoint (overrides containerRuntimeEndpoint).
    #[arg(long)]
    pub container_runtime_endpoint: Option<Endpoint>,
    /// The static pod directory (overrides staticPodPath).
    #[arg(long)]
    pub pod_manifest_path: Option<PathBuf>,
    /// The kubelet's state directory.
    #[arg(long)]
    pub root_dir: Option<PathBuf>,
    /// The node's IP address.
    #[arg(long)]
    pub node_ip: Option<IpAddr>,
    /// Log verbosity (overrides logging.verbosity): 0–2 info, 3–4 debug, 5 and up trace.
    #[arg(short = 'v', long = "v")]
    pub verbosity: Option<u32>,
}

impl Cli {
    /// The flags that override the file, in the configuration crate's terms.
    #[must_use]
    pub fn overrides(&self) -> FlagOverrides {
        FlagOverrides {
            kubeconfig: self.kubeconfig.clone(),
            hostname_override: self.hostname_override.clone(),
            container_runtime_endpoint: self.container_runtime_endpoint.clone(),
            pod_manifest_path: self.pod_manifest_path.clone(),
            root_dir: self.root_dir.clone(),
            node_ip: self.node_ip,
            verbosity: self.verbosity,
        }
    }
}
