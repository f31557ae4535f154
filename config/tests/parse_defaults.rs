//! Absent fields take the upstream v1beta1 defaults, and a full file parses into the model.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use sergeant_config::kubelet::{AuthorizationMode, CgroupDriver, LogFormat};
use sergeant_config::sergeant::RuntimeAdapterKind;
use sergeant_config::{
    Duration, FlagOverrides, KubeletConfiguration, NodeConfig, Quantity, SergeantConfiguration,
    Signal, Threshold,
};

const MINIMAL: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

fn parse(text: &str) -> NodeConfig {
    NodeConfig::parse(text, "test.yaml", &FlagOverrides::default()).unwrap()
}

#[test]
fn minimal_file_gets_upstream_defaults() {
    let config = parse(MINIMAL);
    let k = &config.kubelet;
    assert_eq!(*k, KubeletConfiguration::default());
    assert_eq!(k.sync_frequency, Duration::from_secs(60));
    assert_eq!(k.file_check_frequency, Duration::from_secs(20));
    assert_eq!(k.address, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(k.port, 10250);
    assert_eq!(k.read_only_port, 0);
    assert_eq!(k.healthz_bind_address, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(k.healthz_port, 10248);
    assert!(k.authentication.webhook.enabled);
    assert_eq!(k.authentication.webhook.cache_ttl, Duration::from_secs(120));
    assert!(!k.authentication.anonymous.enabled);
    assert_eq!(k.authorization.mode, AuthorizationMode::Webhook);
    assert_eq!(
        k.authorization.webhook.cache_authorized_ttl,
        Duration::from_secs(300)
    );
    assert_eq!(
        k.authorization.webhook.cache_unauthorized_ttl,
        Duration::from_secs(30)
    );
    assert_eq!(
        k.container_runtime_endpoint.to_string(),
        "unix:///run/containerd/containerd.sock"
    );
    assert_eq!(k.runtime_request_timeout, Duration::from_secs(120));
    assert_eq!(k.max_pods, 110);
    assert_eq!(k.pod_pids_limit, -1);
    assert_eq!(k.resolv_conf, PathBuf::from("/etc/resolv.conf"));
    assert_eq!(k.eviction_hard.len(), 4);
    assert_eq!(
        k.eviction_hard[&Signal::MemoryAvailable].to_string(),
        "100Mi"
    );
    assert_eq!(
        k.eviction_hard[&Signal::NodeFsAvailable],
        Threshold::Percentage(10.0)
    );
    assert_eq!(
        k.eviction_hard[&Signal::ImageFsAvailable],
        Threshold::Percentage(15.0)
    );
    assert_eq!(
        k.eviction_hard[&Signal::NodeFsInodesFree],
        Threshold::Percentage(5.0)
    );
    assert_eq!(
        k.eviction_pressure_transition_period,
        Duration::from_secs(300)
    );
    assert_eq!(k.image_gc_high_threshold_percent, 85);
    assert_eq!(k.image_gc_low_threshold_percent, 80);
    assert_eq!(k.image_minimum_gc_age, Duration::from_secs(120));
    assert!(k.image_maximum_gc_age.is_zero());
    assert_eq!(k.node_status_update_frequency, Duration::from_secs(10));
    assert_eq!(k.node_status_report_frequency, Duration::from_secs(300));
    assert_eq!(k.node_lease_duration_seconds, 40);
    assert_eq!(k.cgroup_driver, CgroupDriver::Cgroupfs);
    assert!(k.cgroups_per_qos);
    assert_eq!(k.container_log_max_size, Quantity::mebibytes(10));
    assert_eq!(k.container_log_max_files, 5);
    assert_eq!(k.container_log_monitor_interval, Duration::from_secs(10));
    assert_eq!(k.container_log_max_workers, 1);
    assert!(k.serialize_image_pulls);
    assert_eq!(k.registry_pull_qps, 5);
    assert_eq!(k.registry_burst, 10);
    assert_eq!(
        k.crash_loop_back_off.max_container_restart_period,
        Duration::from_secs(300)
    );
    assert_eq!(k.logging.format, LogFormat::Text);
    assert_eq!(k.logging.verbosity, 0);
    assert!(k.fail_swap_on);
    assert_eq!(k.kube_api_qps, 50);
    assert_eq!(k.kube_api_burst, 100);

    let s = &config.sergeant;
    assert_eq!(*s, SergeantConfiguration::default());
    assert_eq!(s.runtime_adapter, RuntimeAdapterKind::Cri);
    assert_eq!(s.supervision.restart_intensity, 5);
    assert_eq!(s.supervision.restart_period, Duration::from_secs(60));
    assert_eq!(s.supervision.backoff_initial, Duration::from_millis(100));
    assert_eq!(s.supervision.backoff_max, Duration::from_secs(30));
    assert_eq!(s.supervision.backoff_reset_after, Duration::from_secs(60));
    assert_eq!(s.supervision.shutdown_timeout, Duration::from_secs(5));
    assert_eq!(s.supervision.delivery_timeout, Duration::from_secs(2));
    assert_eq!(
        s.crash_loop_back_off.initial_period,
        Duration::from_secs(10)
    );
    let gc = &s.garbage_collection;
    assert_eq!(gc.period, Duration::from_secs(60));
    assert!(gc.minimum_container_age.is_zero());
    assert_eq!(gc.max_dead_per_container, 1);
    assert_eq!(gc.max_dead_containers, -1);

    assert_eq!(
        config.command_line.root_dir,
        PathBuf::from("/var/lib/kubelet")
    );
    assert_eq!(config.command_line.kubeconfig, None);
}

#[test]
fn full_file_with_both_documents_in_either_order() {
    let text = r#"# sergeant example
apiVersion: sergeant.dev/v1alpha1
kind: SergeantConfiguration
runtimeAdapter: fake
supervision:
  restartIntensity: 3
  backoffMax: 10s
crashLoopBackOff:
  initialPeriod: 5s
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
syncFrequency: 1m30s
readOnlyPort: 10255
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
maxPods: 250
evictionHard:
  memory.available: 200Mi
  nodefs.available: "5%"
evictionSoft: {memory.available: 1Gi}
evictionSoftGracePeriod: {memory.available: 1m0s}
kubeReserved: {cpu: 500m, memory: 1Gi}
enforceNodeAllocatable: [pods]
featureGates: {PodLevelResources: true}
logging: {format: json, verbosity: 4}
authentication:
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
  webhook: {cacheTTL: 0s}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
tlsMinVersion: VersionTLS12
---
"#;
    let config = parse(text);
    let k = &config.kubelet;
    assert_eq!(
        k.static_pod_path,
        Some(PathBuf::from("/etc/kubernetes/manifests"))
    );
    assert_eq!(k.sync_frequency, Duration::from_secs(90));
    assert_eq!(k.read_only_port, 10255);
    assert_eq!(
        k.cluster_dns,
        vec![IpAddr::V4(Ipv4Addr::new(10, 96, 0, 10))]
    );
    assert_eq!(k.max_pods, 250);
    assert_eq!(
        k.eviction_hard.len(),
        2,
        "a given evictionHard replaces the defaults"
    );
    assert_eq!(
        k.eviction_hard[&Signal::NodeFsAvailable],
        Threshold::Percentage(5.0)
    );
    assert_eq!(k.eviction_soft[&Signal::MemoryAvailable].to_string(), "1Gi");
    assert_eq!(k.logging.format, LogFormat::Json);
    assert_eq!(k.logging.verbosity, 4);
    assert_eq!(k.authorization.mode, AuthorizationMode::AlwaysAllow);
    assert!(k.authentication.webhook.enabled, "sibling defaults survive");
    assert!(k.authentication.webhook.cache_ttl.is_zero());
    assert_eq!(k.cgroup_driver, CgroupDriver::Cgroupfs);
    assert_eq!(config.sergeant.runtime_adapter, RuntimeAdapterKind::Fake);
    assert_eq!(config.sergeant.supervision.restart_intensity, 3);
    assert_eq!(
        config.sergeant.supervision.backoff_max,
        Duration::from_secs(10)
    );
    assert_eq!(
        config.sergeant.supervision.backoff_initial,
        Duration::from_millis(100)
    );
    assert_eq!(
        config.sergeant.crash_loop_back_off.initial_period,
        Duration::from_secs(5)
    );
}

#[test]
fn serializes_with_upstream_names_and_units_as_written() {
    let text =
        format!("{MINIMAL}evictionHard: {{memory.available: 0.5Gi, nodefs.available: 7.5%}}\n");
    let json = serde_json::to_value(parse(&text)).unwrap();
    let k = &json["kubelet"];
    assert_eq!(k["apiVersion"], "kubelet.config.k8s.io/v1beta1");
    assert_eq!(k["imageGCHighThresholdPercent"], 85);
    assert_eq!(k["clusterDNS"], serde_json::json!([]));
    assert_eq!(k["cgroupsPerQOS"], true);
    assert_eq!(k["kubeAPIQPS"], 50);
    assert_eq!(k["serverTLSBootstrap"], false);
    assert_eq!(k["authentication"]["webhook"]["cacheTTL"], "2m0s");
    assert_eq!(k["authorization"]["webhook"]["cacheAuthorizedTTL"], "5m0s");
    assert_eq!(k["syncFrequency"], "1m0s");
    assert_eq!(k["containerLogMaxSize"], "10Mi");
    assert_eq!(k["evictionHard"]["memory.available"], "0.5Gi");
    assert_eq!(k["evictionHard"]["nodefs.available"], "7.5%");
    assert_eq!(k["hairpinMode"], "promiscuous-bridge");
    assert_eq!(json["sergeant"]["supervision"]["backoffInitial"], "100ms");
    assert_eq!(json["sergeant"]["runtimeAdapter"], "cri");
    assert_eq!(json["commandLine"]["rootDir"], "/var/lib/kubelet");
}

#[test]
fn serialized_documents_parse_back_to_the_same_config() {
    let original = parse(&format!(
        "{MINIMAL}evictionSoft: {{memory.available: 1.5Gi}}\nevictionSoftGracePeriod: {{memory.available: 90s}}\n"
    ));
    let text = format!(
        "{}---\n{}",
        serde_yaml::to_string(&original.kubelet).unwrap(),
        serde_yaml::to_string(&original.sergeant).unwrap()
    );
    let parsed = parse(&text);
    assert_eq!(
        (parsed.kubelet, parsed.sergeant),
        (original.kubelet, original.sergeant)
    );
}

#[test]
fn empty_and_comment_only_documents_are_skipped() {
    let text = format!("# leading comment\n---\n{MINIMAL}---\n# nothing here\n---\n");
    assert_eq!(parse(&text).kubelet, KubeletConfiguration::default());
}

#[test]
fn load_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.yaml");
    std::fs::write(&path, format!("{MINIMAL}maxPods: 42\n")).unwrap();
    let config = NodeConfig::load(&path, &FlagOverrides::default()).unwrap();
    assert_eq!(config.kubelet.max_pods, 42);
}
