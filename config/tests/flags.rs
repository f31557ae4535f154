//! Flags override the file, and flag-only settings land in `CommandLine`.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use sergeant_config::{FlagOverrides, NodeConfig};

const FILE: &str = "apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/crio/crio.sock
staticPodPath: /etc/kubernetes/manifests
logging:
  verbosity: 2
";

#[test]
fn without_flags_the_file_wins() {
    let config = NodeConfig::parse(FILE, "f.yaml", &FlagOverrides::default()).unwrap();
    assert_eq!(
        config.kubelet.container_runtime_endpoint.to_string(),
        "unix:///run/crio/crio.sock"
    );
    assert_eq!(
        config.kubelet.static_pod_path,
        Some(PathBuf::from("/etc/kubernetes/manifests"))
    );
    assert_eq!(config.kubelet.logging.verbosity, 2);
    assert_eq!(
        config.command_line.root_dir,
        PathBuf::from("/var/lib/kubelet")
    );
    assert_eq!(config.command_line.hostname_override, None);
    assert_eq!(config.command_line.node_ip, None);
}

#[test]
fn flags_override_the_file() {
    let flags = FlagOverrides {
        kubeconfig: Some(PathBuf::from("/etc/kubernetes/kubelet.conf")),
        hostname_override: Some("Node-A".to_string()),
        container_runtime_endpoint: Some(
            "unix:///run/containerd/containerd.sock"
                .parse()
                .expect("a valid endpoint"),
        ),
        pod_manifest_path: Some(PathBuf::from("/srv/pods")),
        root_dir: Some(PathBuf::from("/srv/kubelet")),
        node_ip: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7))),
        verbosity: Some(6),
        cni_conf_dir: Some(PathBuf::from("/etc/cni/net.d")),
    };
    let config = NodeConfig::parse(FILE, "f.yaml", &flags).unwrap();
    assert_eq!(
        config.kubelet.container_runtime_endpoint.to_string(),
        "unix:///run/containerd/containerd.sock"
    );
    assert_eq!(
        config.kubelet.static_pod_path,
        Some(PathBuf::from("/srv/pods"))
    );
    assert_eq!(config.kubelet.logging.verbosity, 6);
    assert_eq!(
        config.command_line.kubeconfig,
        Some(PathBuf::from("/etc/kubernetes/kubelet.conf"))
    );
    assert_eq!(config.command_line.root_dir, PathBuf::from("/srv/kubelet"));
    assert_eq!(
        config.command_line.cni_conf_dir,
        Some(PathBuf::from("/etc/cni/net.d"))
    );
    assert_eq!(
        config.command_line.node_ip,
        Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)))
    );
    assert_eq!(config.node_name().unwrap(), "node-a");
}

#[test]
fn flags_fill_fields_the_file_leaves_out() {
    let minimal = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
    let flags = FlagOverrides {
        pod_manifest_path: Some(PathBuf::from("/srv/pods")),
        ..FlagOverrides::default()
    };
    let config = NodeConfig::parse(minimal, "f.yaml", &flags).unwrap();
    assert_eq!(
        config.kubelet.static_pod_path,
        Some(PathBuf::from("/srv/pods"))
    );
}

#[test]
fn node_name_defaults_to_the_lowercased_machine_hostname() {
    let config = NodeConfig::parse(FILE, "f.yaml", &FlagOverrides::default()).unwrap();
    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(config.node_name().unwrap(), machine.trim().to_lowercase());
}

#[test]
fn flags_do_not_hide_file_errors() {
    let flags = FlagOverrides {
        verbosity: Some(3),
        ..FlagOverrides::default()
    };
    let error = NodeConfig::parse(&format!("{FILE}maxPods: -1\n"), "f.yaml", &flags).unwrap_err();
    assert_eq!(error.line(), Some(7));
}
