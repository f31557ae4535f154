//! The `kubelet.config.k8s.io/v1beta1` `KubeletConfiguration` document: the fields sergeant
//! understands, with upstream names and upstream defaults for whatever the file leaves out.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::duration::Duration;
use crate::endpoint::Endpoint;
use crate::eviction::{default_eviction_hard, GracePeriods, Thresholds};
use crate::quantity::Quantity;
use crate::tls::CipherSuite;
pub use crate::tls::TlsVersion;

/// The `apiVersion` a KubeletConfiguration document must carry.
pub const KUBELET_API_VERSION: &str = "kubelet.config.k8s.io/v1beta1";
/// The `kind` of the KubeletConfiguration document.
pub const KUBELET_KIND: &str = "KubeletConfiguration";

/// The upstream kubelet configuration file, so existing node configs work unchanged. Every
/// field absent from the file takes the upstream v1beta1 default (see `Default`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct KubeletConfiguration {
    /// Always `kubelet.config.k8s.io/v1beta1`.
    pub api_version: String,
    /// Always `KubeletConfiguration`.
    pub kind: String,
    /// Directory of static pod manifests; none means no static pods.
    pub static_pod_path: Option<PathBuf>,
    /// How often every pod is re-synced even without events (1m).
    pub sync_frequency: Duration,
    /// How often the static pod directory is re-read (20s).
    pub file_check_frequency: Duration,
    /// Address the authenticated API (port 10250) binds (0.0.0.0).
    pub address: IpAddr,
    /// Port of the authenticated API (10250); must not be 0.
    pub port: u16,
    /// Port of the unauthenticated read-only API; 0 turns it off (0).
    pub read_only_port: u16,
    /// Address `/healthz` binds (127.0.0.1).
    pub healthz_bind_address: IpAddr,
    /// Port of `/healthz`; 0 turns it off (10248).
    pub healthz_port: u16,
    /// Serving certificate; none means a self-signed one.
    pub tls_cert_file: Option<PathBuf>,
    /// Key of `tlsCertFile`.
    pub tls_private_key_file: Option<PathBuf>,
    /// Cipher suites the kubelet API may negotiate (Go names); empty means every suite
    /// sergeant serves. TLS 1.3 suites not named stay enabled when none is named, as upstream
    /// (where Go's TLS 1.3 suites are not configurable). Read when the API starts: a change
    /// needs a restart, like `tlsCertFile`.
    pub tls_cipher_suites: Vec<CipherSuite>,
    /// Lowest TLS version served, VersionTLS12 or VersionTLS13; none means TLS 1.2. Read when
    /// the API starts: a change needs a restart.
    pub tls_min_version: Option<TlsVersion>,
    /// Rotate the client certificate through the certificates API (false).
    pub rotate_certificates: bool,
    /// Request the serving certificate from the certificates API (false).
    #[serde(rename = "serverTLSBootstrap")]
    pub server_tls_bootstrap: bool,
    /// Who may call the authenticated API.
    pub authentication: Authentication,
    /// What authenticated callers may do.
    pub authorization: Authorization,
    /// CRI runtime socket (`unix:///run/containerd/containerd.sock`), parsed at load.
    pub container_runtime_endpoint: Endpoint,
    /// CRI image service socket; none means `containerRuntimeEndpoint`.
    pub image_service_endpoint: Option<Endpoint>,
    /// Timeout of every CRI call except long-running ones (2m).
    pub runtime_request_timeout: Duration,
    /// Most pods the node admits (110).
    pub max_pods: i32,
    /// Most pids per pod; -1 means unlimited (-1).
    pub pod_pids_limit: i64,
    /// Pod CIDR in standalone mode; none means the one the API server assigns.
    #[serde(rename = "podCIDR")]
    pub pod_cidr: Option<String>,
    /// Resolver configuration handed to pods with `dnsPolicy: Default` (/etc/resolv.conf).
    pub resolv_conf: PathBuf,
    /// Where pod log directories go (/var/log/pods); an absolute path.
    pub pod_logs_dir: PathBuf,
    /// Cluster DNS server addresses written into pods' resolv.conf.
    #[serde(rename = "clusterDNS")]
    pub cluster_dns: Vec<IpAddr>,
    /// Cluster domain appended to pod search paths; none means no cluster search domains.
    pub cluster_domain: Option<String>,
    /// Thresholds that evict at once (upstream Linux defaults).
    pub eviction_hard: Thresholds,
    /// Thresholds that evict after their grace period.
    pub eviction_soft: Thresholds,
    /// How long each soft threshold must hold before evicting.
    pub eviction_soft_grace_period: GracePeriods,
    /// How much to reclaim beyond a threshold once evicting.
    pub eviction_minimum_reclaim: Thresholds,
    /// How long a pressure condition stays after the pressure ends (5m).
    pub eviction_pressure_transition_period: Duration,
    /// Longest termination grace period (seconds) given to pods evicted by soft thresholds (0).
    pub eviction_max_pod_grace_period: i32,
    /// Disk usage percentage that starts image GC (85).
    #[serde(rename = "imageGCHighThresholdPercent")]
    pub image_gc_high_threshold_percent: i32,
    /// Disk usage percentage image GC frees down to (80).
    #[serde(rename = "imageGCLowThresholdPercent")]
    pub image_gc_low_threshold_percent: i32,
    /// Youngest an unused image may be and still be collected (2m).
    #[serde(rename = "imageMinimumGCAge")]
    pub image_minimum_gc_age: Duration,
    /// Unused images older than this are collected regardless of disk use; 0 turns it off (0).
    #[serde(rename = "imageMaximumGCAge")]
    pub image_maximum_gc_age: Duration,
    /// How often node status is computed and posted when it changed (10s).
    pub node_status_update_frequency: Duration,
    /// How often node status is posted even when unchanged (5m).
    pub node_status_report_frequency: Duration,
    /// Node lease duration in seconds (40).
    pub node_lease_duration_seconds: i32,
    /// Cgroup manager driving the node's cgroups (cgroupfs).
    pub cgroup_driver: CgroupDriver,
    /// Root cgroup for pods; none means the root of the hierarchy.
    pub cgroup_root: Option<String>,
    /// Create the QoS cgroup hierarchy (true).
    #[serde(rename = "cgroupsPerQOS")]
    pub cgroups_per_qos: bool,
    /// Resources set aside for Kubernetes daemons.
    pub kube_reserved: Reservations,
    /// Resources set aside for the operating system.
    pub system_reserved: Reservations,
    /// Which allocatable limits are enforced with cgroups (pods).
    pub enforce_node_allocatable: Vec<AllocatableEnforcement>,
    /// Sysctls beyond the safe set that pods may set: names or `prefix*` patterns of
    /// namespaced sysctls (none).
    pub allowed_unsafe_sysctls: Vec<String>,
    /// Feature gates by name.
    pub feature_gates: BTreeMap<String, bool>,
    /// Whether a container that names no seccomp profile (nor does its pod) runs under the
    /// runtime's default profile (`RuntimeDefault`) rather than none (`Unconfined`) (false).
    pub seccomp_default: bool,
    /// How long node shutdown is delayed for pods to stop; 0 turns graceful shutdown off (0).
    pub shutdown_grace_period: Duration,
    /// The part of `shutdownGracePeriod` reserved for critical pods (0).
    pub shutdown_grace_period_critical_pods: Duration,
    /// Size at which a container log is rotated (10Mi).
    pub container_log_max_size: Quantity,
    /// Log files kept per container, the live one included (5).
    pub container_log_max_files: i32,
    /// How often container logs are checked for rotation; at least 3s (10s).
    pub container_log_monitor_interval: Duration,
    /// How many containers' logs are rotated at the same time; at least 1 (1).
    pub container_log_max_workers: i32,
    /// Pull one image at a time (true).
    pub serialize_image_pulls: bool,
    /// Most parallel image pulls; none means unlimited when pulls are not serialized.
    pub max_parallel_image_pulls: Option<i32>,
    /// Image pulls per second; 0 means unlimited (5).
    #[serde(rename = "registryPullQPS")]
    pub registry_pull_qps: i32,
    /// Burst of image pulls above `registryPullQPS` (10).
    pub registry_burst: i32,
    /// Container restart back-off limits.
    pub crash_loop_back_off: CrashLoopBackOff,
    /// Log format and verbosity.
    pub logging: Logging,
    /// Refuse to start when swap is on (true).
    pub fail_swap_on: bool,
    /// How pods reach themselves through a service (promiscuous-bridge).
    pub hairpin_mode: HairpinMode,
    /// Cloud provider's identifier of the node.
    #[serde(rename = "providerID")]
    pub provider_id: Option<String>,
    /// API server requests per second (50).
    #[serde(rename = "kubeAPIQPS")]
    pub kube_api_qps: i32,
    /// Burst of API server requests above `kubeAPIQPS` (100).
    #[serde(rename = "kubeAPIBurst")]
    pub kube_api_burst: i32,
    /// How the config maps and secrets pods use are kept current (Watch).
    pub config_map_and_secret_change_detection_strategy: ChangeDetectionStrategy,
}

impl Default for KubeletConfiguration {
    /// The upstream v1beta1 defaults (Linux).
    fn default() -> Self {
        KubeletConfiguration {
            api_version: KUBELET_API_VERSION.to_string(),
            kind: KUBELET_KIND.to_string(),
            static_pod_path: None,
            sync_frequency: Duration::from_secs(60),
            file_check_frequency: Duration::from_secs(20),
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 10250,
            read_only_port: 0,
            healthz_bind_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            healthz_port: 10248,
            tls_cert_file: None,
            tls_private_key_file: None,
            tls_cipher_suites: Vec::new(),
            tls_min_version: None,
            rotate_certificates: false,
            server_tls_bootstrap: false,
            authentication: Authentication::default(),
            authorization: Authorization::default(),
            container_runtime_endpoint: Endpoint::Unix(PathBuf::from(
                "/run/containerd/containerd.sock",
            )),
            image_service_endpoint: None,
            runtime_request_timeout: Duration::from_secs(120),
            max_pods: 110,
            pod_pids_limit: -1,
            pod_cidr: None,
            resolv_conf: PathBuf::from("/etc/resolv.conf"),
            pod_logs_dir: PathBuf::from("/var/log/pods"),
            cluster_dns: Vec::new(),
            cluster_domain: None,
            eviction_hard: default_eviction_hard(),
            eviction_soft: Thresholds::new(),
            eviction_soft_grace_period: GracePeriods::new(),
            eviction_minimum_reclaim: Thresholds::new(),
            eviction_pressure_transition_period: Duration::from_secs(300),
            eviction_max_pod_grace_period: 0,
            image_gc_high_threshold_percent: 85,
            image_gc_low_threshold_percent: 80,
            image_minimum_gc_age: Duration::from_secs(120),
            image_maximum_gc_age: Duration::ZERO,
            node_status_update_frequency: Duration::from_secs(10),
            node_status_report_frequency: Duration::from_secs(300),
            node_lease_duration_seconds: 40,
            cgroup_driver: CgroupDriver::Cgroupfs,
            cgroup_root: None,
            cgroups_per_qos: true,
            kube_reserved: Reservations::new(),
            system_reserved: Reservations::new(),
            enforce_node_allocatable: vec![AllocatableEnforcement::Pods],
            allowed_unsafe_sysctls: Vec::new(),
            feature_gates: BTreeMap::new(),
            seccomp_default: false,
            shutdown_grace_period: Duration::ZERO,
            shutdown_grace_period_critical_pods: Duration::ZERO,
            container_log_max_size: Quantity::mebibytes(10),
            container_log_max_files: 5,
            container_log_monitor_interval: Duration::from_secs(10),
            container_log_max_workers: 1,
            serialize_image_pulls: true,
            max_parallel_image_pulls: None,
            registry_pull_qps: 5,
            registry_burst: 10,
            crash_loop_back_off: CrashLoopBackOff::default(),
            logging: Logging::default(),
            fail_swap_on: true,
            hairpin_mode: HairpinMode::PromiscuousBridge,
            provider_id: None,
            kube_api_qps: 50,
            kube_api_burst: 100,
            config_map_and_secret_change_detection_strategy: ChangeDetectionStrategy::Watch,
        }
    }
}

/// How callers of the authenticated API prove who they are.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Authentication {
    /// Client certificate authentication.
    pub x509: X509Authentication,
    /// Bearer tokens checked with the API server's TokenReview.
    pub webhook: WebhookAuthentication,
    /// Requests without credentials.
    pub anonymous: AnonymousAuthentication,
}

/// Client certificate authentication settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct X509Authentication {
    /// CA bundle that signs client certificates; none turns certificate authentication off.
    #[serde(rename = "clientCAFile")]
    pub client_ca_file: Option<PathBuf>,
}

/// Token authentication through the API server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookAuthentication {
    /// Whether tokens are checked (true).
    pub enabled: bool,
    /// How long a TokenReview answer is cached (2m).
    #[serde(rename = "cacheTTL")]
    pub cache_ttl: Duration,
}

impl Default for WebhookAuthentication {
    fn default() -> Self {
        WebhookAuthentication {
            enabled: true,
            cache_ttl: Duration::from_secs(120),
        }
    }
}

/// Anonymous access settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnonymousAuthentication {
    /// Whether unauthenticated requests are let through as `system:anonymous` (false).
    pub enabled: bool,
}

/// How requests to the authenticated API are authorized.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Authorization {
    /// The authorizer (Webhook).
    pub mode: AuthorizationMode,
    /// SubjectAccessReview caching.
    pub webhook: WebhookAuthorization,
}

/// The authorizer of the authenticated API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AuthorizationMode {
    /// Ask the API server (SubjectAccessReview).
    #[default]
    Webhook,
    /// Allow every authenticated request.
    AlwaysAllow,
}

/// SubjectAccessReview caching.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct WebhookAuthorization {
    /// How long an "allowed" answer is cached (5m).
    #[serde(rename = "cacheAuthorizedTTL")]
    pub cache_authorized_ttl: Duration,
    /// How long a "denied" answer is cached (30s).
    #[serde(rename = "cacheUnauthorizedTTL")]
    pub cache_unauthorized_ttl: Duration,
}

impl Default for WebhookAuthorization {
    fn default() -> Self {
        WebhookAuthorization {
            cache_authorized_ttl: Duration::from_secs(300),
            cache_unauthorized_ttl: Duration::from_secs(30),
        }
    }
}

/// The cgroup manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupDriver {
    /// Write the cgroup filesystem directly.
    Cgroupfs,
    /// Go through systemd.
    Systemd,
}

/// A resource that `kubeReserved` / `systemReserved` may set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReservedResource {
    /// CPU, in cores.
    Cpu,
    /// Memory, in bytes.
    Memory,
    /// Local ephemeral storage, in bytes.
    EphemeralStorage,
    /// Process ids.
    Pid,
}

/// Reserved amounts per resource.
pub type Reservations = BTreeMap<ReservedResource, Quantity>;

/// A node allocatable limit enforced with cgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatableEnforcement {
    /// Enforce allocatable on the pods cgroup.
    Pods,
    /// Enforce `systemReserved` on its cgroup.
    SystemReserved,
    /// Enforce `kubeReserved` on its cgroup.
    KubeReserved,
    /// Enforce only the compressible part (CPU) of `systemReserved`.
    SystemReservedCompressible,
    /// Enforce only the compressible part (CPU) of `kubeReserved`.
    KubeReservedCompressible,
    /// Enforce nothing; cannot be combined with the others.
    None,
}

/// Container restart back-off limits shared with upstream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CrashLoopBackOff {
    /// Longest delay between restarts of a crashing container, 1s to 300s (300s).
    pub max_container_restart_period: Duration,
}

impl Default for CrashLoopBackOff {
    fn default() -> Self {
        CrashLoopBackOff {
            max_container_restart_period: Duration::from_secs(300),
        }
    }
}

/// Log output settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Logging {
    /// Line format (text).
    pub format: LogFormat,
    /// Verbosity; higher logs more (0).
    pub verbosity: u32,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// How the config maps and secrets pods use are kept current
/// (`configMapAndSecretChangeDetectionStrategy`), upstream's three strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeDetectionStrategy {
    /// Every read goes to the API server.
    Get,
    /// Reads are answered from a cache whose entries live for the node's TTL (the
    /// `node.alpha.kubernetes.io/ttl` annotation, or a minute).
    Cache,
    /// One watch per object in use, dropped when the last pod using it goes; reads are
    /// answered from what the watch saw.
    Watch,
}

/// How hairpin traffic (a pod reaching itself through a service) is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HairpinMode {
    /// Put the bridge in promiscuous mode.
    PromiscuousBridge,
    /// Set the hairpin flag on the container's veth.
    HairpinVeth,
    /// Do nothing.
    None,
}
