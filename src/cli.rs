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
    /// The CNI configuration directory whose loaded file is checked for network readiness
    /// (default: the directory the container runtime names in its status, if it names one).
    #[arg(long, value_name = "DIR")]
    pub cni_conf_dir: Option<PathBuf>,
    /// Log verbosity (overrides logging.verbosity): 0–2 info, 3–4 debug, 5 and up trace.
    #[arg(short = 'v', long = "v")]
    pub verbosity: Option<u32>,
    /// Write the log to this file instead of stderr (created, or appended to).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
    /// Rotate --log-file before it would pass this size, in MB of 1024 × 1024 bytes (default
    /// 1800; 0 = never rotate). The 5 newest rotated files are kept, PATH.1 (newest) to PATH.5.
    #[arg(long, value_name = "MB", allow_negative_numbers = true)]
    pub log_file_max_size: Option<u64>,
    /// Run as a Windows service: report to the service control manager and stop the agent
    /// in order when it asks (Windows builds only; refused elsewhere).
    #[arg(long)]
    pub windows_service: bool,
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
            cni_conf_dir: self.cni_conf_dir.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, Parser as _};

    use super::Cli;
    use crate::log_file::{DEFAULT_MAX_SIZE_MB, KEPT_OLD_FILES};

    #[test]
    fn log_file_help_states_the_default_and_the_files_kept() {
        let help = Cli::command().render_long_help().to_string();
        assert!(
            help.contains(&format!("default {DEFAULT_MAX_SIZE_MB}")),
            "{help}"
        );
        assert!(
            help.contains(&format!("The {KEPT_OLD_FILES} newest rotated files")),
            "{help}"
        );
        assert!(help.contains(&format!("PATH.{KEPT_OLD_FILES}")), "{help}");
    }

    #[test]
    fn a_bad_log_file_size_names_the_flag() {
        let err = Cli::try_parse_from(["sergeant", "--config", "c", "--log-file-max-size", "-3"])
            .expect_err("refused");
        assert!(err.to_string().contains("--log-file-max-size"), "{err}");
    }
}
