//! A full upstream-style KubeletConfiguration — every v1beta1 field of Kubernetes v1.37.2 set —
//! against the sergeant binary: it starts; each setting it accepts without upstream's effect is
//! warned about at its line (log and `/debug/config`); each setting it cannot honour stops
//! start-up with one line naming file, line, field and reason; and settings it acts on change
//! behaviour (`syncFrequency` paces the resync, and a reload changes the pace).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::time::Duration;

use common::node::{manifest, phase, sleeper, Node, SHELL};
use common::{run_to_exit, wait_for, Agent, TestConfig};

/// Every upstream field but the five `TestConfig` writes (address, port, readOnlyPort,
/// healthzBindAddress, healthzPort). `ENDPOINT`, `PODS` and `LOGS` are filled in.
const FULL: &str = r#"enableServer: true
staticPodPath: PODS
podLogsDir: LOGS
syncFrequency: 1m0s
fileCheckFrequency: 20s
httpCheckFrequency: 20s
staticPodURL: ""
staticPodURLHeader: {}
tlsCertFile: null
tlsPrivateKeyFile: null
tlsCipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
tlsCurvePreferences: []
tlsMinVersion: VersionTLS12
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  x509:
    clientCAFile: null
  webhook:
    enabled: true
    cacheTTL: 2m0s
  anonymous:
    enabled: false
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 5m0s
    cacheUnauthorizedTTL: 30s
registryPullQPS: 5
registryBurst: 10
imagePullCredentialsVerificationPolicy: NeverVerifyPreloadedImages
preloadedImagesVerificationAllowlist: []
eventRecordQPS: 10
eventBurst: 100
enableDebuggingHandlers: true
enableContentionProfiling: false
oomScoreAdj: -999
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
streamingConnectionIdleTimeout: 4h0m0s
nodeStatusUpdateFrequency: 10s
nodeStatusReportFrequency: 5m0s
nodeLeaseDurationSeconds: 40
imageMinimumGCAge: 2m0s
imageMaximumGCAge: 0s
imageGCHighThresholdPercent: 85
imageGCLowThresholdPercent: 80
volumeStatsAggPeriod: 1m0s
kubeletCgroups: ""
systemCgroups: ""
cgroupRoot: /
cgroupsPerQOS: true
cgroupDriver: cgroupfs
cpuManagerPolicy: none
singleProcessOOMKill: true
cpuManagerPolicyOptions: {}
cpuManagerReconcilePeriod: 10s
memoryManagerPolicy: None
topologyManagerPolicy: none
topologyManagerScope: container
topologyManagerPolicyOptions: {}
qosReserved: {}
runtimeRequestTimeout: 2m0s
hairpinMode: promiscuous-bridge
maxPods: 110
podCIDR: 10.244.7.0/24
podPidsLimit: -1
resolvConf: /etc/resolv.conf
runOnce: false
cpuCFSQuota: true
cpuCFSQuotaPeriod: 100ms
nodeStatusMaxImages: 50
maxOpenFiles: 1000000
contentType: application/vnd.kubernetes.protobuf
kubeAPIQPS: 50
kubeAPIBurst: 100
serializeImagePulls: true
maxParallelImagePulls: 1
evictionHard:
  memory.available: 100Mi
  nodefs.available: 10%
  nodefs.inodesFree: 5%
  imagefs.available: 15%
evictionSoft: {}
evictionSoftGracePeriod: {}
evictionPressureTransitionPeriod: 5m0s
evictionMaxPodGracePeriod: 0
evictionMinimumReclaim: {}
mergeDefaultEvictionSettings: false
podsPerCore: 0
enableControllerAttachDetach: true
protectKernelDefaults: false
makeIPTablesUtilChains: true
iptablesMasqueradeBit: 14
iptablesDropBit: 15
featureGates:
  PodLevelResources: true
  InPlacePodVerticalScalingExclusiveCPUs: true
failSwapOn: true
memorySwap:
  swapBehavior: NoSwap
containerLogMaxSize: 10Mi
containerLogMaxFiles: 5
containerLogMaxWorkers: 1
containerLogMonitorInterval: 10s
configMapAndSecretChangeDetectionStrategy: Watch
systemReserved:
  cpu: 100m
  memory: 100Mi
kubeReserved:
  cpu: 100m
  memory: 100Mi
reservedSystemCPUs: ""
showHiddenMetricsForVersion: ""
systemReservedCgroup: ""
kubeReservedCgroup: ""
enforceNodeAllocatable: [pods]
allowedUnsafeSysctls: []
defaultPodSysctls: []
volumePluginDir: /usr/libexec/kubernetes/kubelet-plugins/volume/exec/
providerID: sergeant://config-fields
kernelMemcgNotification: false
logging:
  format: text
  flushFrequency: 5s
  verbosity: 0
  options:
    json:
      infoBufferSize: "0"
enableSystemLogHandler: true
enableSystemLogQuery: false
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
shutdownGracePeriodByPodPriority: []
crashLoopBackOff:
  maxContainerRestartPeriod: 5m0s
reservedMemory: []
enableProfilingHandler: true
enableDebugFlagsHandler: true
seccompDefault: false
memoryThrottlingFactor: 0.9
memoryReservationPolicy: None
registerWithTaints: []
registerNode: true
tracing:
  endpoint: localhost:4317
  samplingRatePerMillion: 0
localStorageCapacityIsolation: true
containerRuntimeEndpoint: ENDPOINT
imageServiceEndpoint: ENDPOINT
failCgroupV1: false
userNamespaces:
  idsPerPod: 65536
"#;

/// The settings of [`FULL`] sergeant accepts without upstream's effect: each is warned about.
const WARNED: &[&str] = &[
    "eventRecordQPS",
    "contentType",
    "featureGates.InPlacePodVerticalScalingExclusiveCPUs",
    "logging.options",
    "tracing",
    "localStorageCapacityIsolation",
];

fn endpoint() -> String {
    std::env::var("SERGEANT_CRI_ENDPOINT")
        .expect("SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh")
}

/// The full configuration, in a `TestConfig` with free ports; its pod and log directories are
/// in `dir`.
fn full(dir: &std::path::Path) -> TestConfig {
    let body = FULL
        .replace("ENDPOINT", &endpoint())
        .replace("PODS", &dir.join("pods").display().to_string())
        .replace("LOGS", &dir.join("logs").display().to_string());
    fs::create_dir_all(dir.join("pods")).expect("a manifest directory");
    TestConfig::new().kubelet(&body)
}

/// The 1-based line of the block key at `path` in `text`.
fn line_of(text: &str, path: &str) -> usize {
    let mut from = 0;
    let mut found = 0;
    for (depth, key) in path.split('.').enumerate() {
        let prefix = format!("{}{key}:", "  ".repeat(depth));
        found = text
            .lines()
            .enumerate()
            .skip(from)
            .find(|(_, line)| line.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{path} in the configuration"))
            .0;
        from = found + 1;
    }
    found + 1
}

#[test]
fn a_full_upstream_configuration_starts_and_warns_at_each_unsupported_line() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = full(dir.path());
    let text = config.render();
    let agent = Agent::start(&config, &[]);
    let state = agent.get_json("/debug/config");
    let warnings = state["active"]["warnings"].as_array().expect("warnings");
    let fields: BTreeSet<&str> = warnings
        .iter()
        .map(|w| w["field"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(fields, WARNED.iter().copied().collect(), "{warnings:#?}");
    let log = agent.log();
    for warning in warnings {
        let field = warning["field"].as_str().unwrap_or_default();
        let line = line_of(&text, field);
        assert_eq!(warning["line"], line, "{warning}");
        let logged = format!("{}:{line}: {field}: ", agent.config_path.display());
        assert!(log.contains(&logged), "{logged} in the log:\n{log}");
    }
    // Settings it acts on are in force.
    let kubelet = &state["active"]["kubelet"];
    assert_eq!(kubelet["providerID"], "sergeant://config-fields");
    assert_eq!(kubelet["registryPullQPS"], 5);
    assert_eq!(kubelet["kubeAPIQPS"], 50);
}

#[test]
fn each_refused_setting_stops_start_up_with_its_line_field_and_reason() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = full(dir.path()).render();
    for (from, to, field, reason) in [
        (
            "rotateCertificates: false",
            "rotateCertificates: true",
            "rotateCertificates",
            "rotation",
        ),
        (
            "cgroupDriver: cgroupfs",
            "cgroupDriver: systemd",
            "cgroupDriver",
            "use cgroupfs",
        ),
        (
            "serverTLSBootstrap: false",
            "serverTLSBootstrap: true",
            "serverTLSBootstrap",
            "serving certificate",
        ),
        (
            "cpuManagerPolicy: none",
            "cpuManagerPolicy: static",
            "cpuManagerPolicy",
            "CPU manager",
        ),
        (
            "memoryManagerPolicy: None",
            "memoryManagerPolicy: Static",
            "memoryManagerPolicy",
            "memory manager",
        ),
        (
            "topologyManagerPolicy: none",
            "topologyManagerPolicy: single-numa-node",
            "topologyManagerPolicy",
            "topology manager",
        ),
        (
            "registerNode: true",
            "registerNode: false",
            "registerNode",
            "registers",
        ),
        (
            "enableServer: true",
            "enableServer: false",
            "enableServer",
            "kubelet API",
        ),
        ("runOnce: false", "runOnce: true", "runOnce", "daemon"),
        (
            "podsPerCore: 0",
            "podsPerCore: 10",
            "podsPerCore",
            "maxPods",
        ),
        (
            "cpuCFSQuota: true",
            "cpuCFSQuota: false",
            "cpuCFSQuota",
            "CFS quota",
        ),
        (
            "protectKernelDefaults: false",
            "protectKernelDefaults: true",
            "protectKernelDefaults",
            "kernel tunables",
        ),
        (
            "enableDebuggingHandlers: true",
            "enableDebuggingHandlers: false",
            "enableDebuggingHandlers",
            "exec",
        ),
        (
            "staticPodURL: \"\"",
            "staticPodURL: http://pods.invalid/",
            "staticPodURL",
            "staticPodPath",
        ),
        (
            "allowedUnsafeSysctls: []",
            "allowedUnsafeSysctls: [vm.swappiness]",
            "allowedUnsafeSysctls",
            "not known to be namespaced",
        ),
        (
            "registerWithTaints: []",
            "registerWithTaints: [{key: a, effect: NoSchedule}]",
            "registerWithTaints",
            "taints",
        ),
        (
            "  swapBehavior: NoSwap",
            "  swapBehavior: LimitedSwap",
            "memorySwap.swapBehavior",
            "swap",
        ),
        (
            "enforceNodeAllocatable: [pods]",
            "enforceNodeAllocatable: [pods, system-reserved]",
            "enforceNodeAllocatable",
            "systemReservedCgroup",
        ),
        (
            "  PodLevelResources: true",
            "  NoSuchGate: true",
            "featureGates.NoSuchGate",
            "unrecognized feature gate",
        ),
        (
            "  PodLevelResources: true",
            "  InPlacePodVerticalScaling: false",
            "featureGates.InPlacePodVerticalScaling",
            "locked to true",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let edited = text.replacen(from, to, 1);
        let (code, stderr) = run_to_exit(&edited);
        assert_eq!(code, Some(2), "{to}: {stderr}");
        let line = stderr.trim();
        assert_eq!(line.lines().count(), 1, "one line for {to}: {stderr}");
        let at = line_of(&edited, field);
        let expected = format!("sergeant: invalid configuration: CONFIG:{at}:");
        assert!(line.starts_with(&expected), "{expected} for {to}: {line}");
        assert!(line.contains(&format!(" {field}: ")), "{field} in {line}");
        assert!(line.contains(reason), "{reason:?} in {line}");
    }
}

/// `sergeant_pod_resyncs_total` on the node's metrics.
fn resyncs(node: &Node) -> u64 {
    counter(node, "sergeant_pod_resyncs_total")
}

#[test]
fn sync_frequency_paces_the_resync_and_a_reload_changes_it() {
    let node = Node::start_with("resync", "syncFrequency: 1s\n");
    node.write("sleeper.yaml", &sleeper("sleeper"));
    node.wait_pod("sleeper", "Running", |p| phase(p) == "Running");
    // Every 1 s to 1.5 s (upstream's jitter): three within 6 s.
    let before = resyncs(&node);
    wait_for(
        "three resyncs at syncFrequency: 1s",
        Duration::from_secs(6),
        || (resyncs(&node) >= before + 3).then_some(()),
    );

    let path = &node.agent.config_path;
    let text = fs::read_to_string(path).expect("the configuration");
    fs::write(
        path,
        text.replace("syncFrequency: 1s", "syncFrequency: 1m0s"),
    )
    .expect("edited");
    let state = wait_for("the reload", Duration::from_secs(10), || {
        let state = node.agent.get_json("/debug/config");
        (state["active"]["kubelet"]["syncFrequency"] == "1m0s").then_some(state)
    });
    let change = &state["lastReload"]["changes"][0];
    assert_eq!(change["field"], "syncFrequency", "{state}");
    assert_eq!(change["apply"]["live"], "pod-workers", "{state}");
    assert!(
        node.agent
            .log()
            .contains("syncFrequency applied live by pod-workers"),
        "{}",
        node.agent.log()
    );
    // The resync already scheduled (at most 1.5 s away) still comes; then none for a minute.
    std::thread::sleep(Duration::from_millis(1600));
    let settled = resyncs(&node);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        resyncs(&node),
        settled,
        "no resync within 4 s at syncFrequency: 1m"
    );
}

/// A counter on the node's metrics, 0 before its first increment.
fn counter(node: &Node, name: &str) -> u64 {
    let (_, metrics) = node.agent.get("/metrics");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map_or(0, |value| value as u64)
}

#[test]
fn registry_pull_qps_refuses_a_pull_past_the_burst_and_the_back_off_recovers() {
    // One pull a second, one at once: a pod's two containers pull one after the other, so the
    // second pull comes less than a second after the first even on a loaded machine, and is
    // refused; the image back-off (10 s, per pod and image as upstream) retries it.
    let node = Node::start_with(
        "pullqps",
        "registryPullQPS: 1\nregistryBurst: 1\nserializeImagePulls: false\n",
    );
    let container = |name: &str| {
        format!("  - name: {name}\n    image: {SHELL}\n    imagePullPolicy: Always\n    command: [sleep, '3600']\n")
    };
    node.write(
        "pulls.yaml",
        &manifest(
            "pulls",
            &format!("  containers:\n{}{}", container("a"), container("b")),
        ),
    );
    wait_for("a pull refused for QPS", Duration::from_secs(30), || {
        (counter(&node, "sergeant_image_pulls_throttled_total") >= 1).then_some(())
    });
    let pod = node.wait_pod("pulls", "Running", |p| {
        phase(p) == "Running"
            && p["status"]["containerStatuses"]
                .as_array()
                .is_some_and(|all| all.iter().all(|c| c["ready"] == true))
    });
    assert!(
        pod["status"]["containerStatuses"]
            .as_array()
            .is_some_and(|all| all.iter().all(|c| c["restartCount"] == 0)),
        "the refused pull was retried, nothing restarted: {pod}"
    );
}
