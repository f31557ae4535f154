//! Diffing classifies each changed field as live (with its owner) or restart-required.

use sergeant_config::{diff, Apply, FieldChange, FlagOverrides, NodeConfig, Owner};

const HEAD: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
const SERGEANT: &str = "---\napiVersion: sergeant.dev/v1alpha1\nkind: SergeantConfiguration\n";

fn config(extra: &str) -> NodeConfig {
    NodeConfig::parse(
        &format!("{HEAD}{extra}"),
        "d.yaml",
        &FlagOverrides::default(),
    )
    .unwrap()
}

fn changes(old: &str, new: &str) -> Vec<(String, Apply)> {
    diff(&config(old), &config(new))
        .changes
        .into_iter()
        .map(|FieldChange { field, apply }| (field, apply))
        .collect()
}

fn one(field: &str, apply: Apply) -> Vec<(String, Apply)> {
    vec![(field.to_string(), apply)]
}

#[test]
fn identical_configs_have_no_changes() {
    let result = diff(&config("maxPods: 5\n"), &config("maxPods: 5\n"));
    assert!(result.is_empty());
    assert!(!result.requires_restart());
}

#[test]
fn live_fields_name_their_owner() {
    let cases = [
        (
            "evictionHard: {memory.available: 1Gi}\n",
            "evictionHard",
            Owner::PodManager,
        ),
        ("maxPods: 20\n", "maxPods", Owner::PodManager),
        (
            "logging: {verbosity: 3}\n",
            "logging.verbosity",
            Owner::Logging,
        ),
        (
            "containerRuntimeEndpoint: unix:///run/crio/crio.sock\n",
            "containerRuntimeEndpoint",
            Owner::RuntimeAdapter,
        ),
        (
            "runtimeRequestTimeout: 30s\n",
            "runtimeRequestTimeout",
            Owner::RuntimeAdapter,
        ),
        ("syncFrequency: 30s\n", "syncFrequency", Owner::PodWorkers),
        (
            "staticPodPath: /srv/pods\n",
            "staticPodPath",
            Owner::StaticPodSource,
        ),
        (
            "crashLoopBackOff: {maxContainerRestartPeriod: 60s}\n",
            "crashLoopBackOff",
            Owner::PodWorkers,
        ),
        (
            "nodeStatusUpdateFrequency: 4s\n",
            "nodeStatusUpdateFrequency",
            Owner::NodeStatus,
        ),
        (
            "nodeLeaseDurationSeconds: 20\n",
            "nodeLeaseDurationSeconds",
            Owner::NodeStatus,
        ),
        (
            "containerLogMonitorInterval: 5s\n",
            "containerLogMonitorInterval",
            Owner::ContainerLogManager,
        ),
        (
            "containerLogMaxSize: 1Mi\n",
            "containerLogMaxSize",
            Owner::ContainerLogManager,
        ),
        (
            &format!("{SERGEANT}runtimeAdapter: fake\n"),
            "sergeant.runtimeAdapter",
            Owner::RuntimeAdapter,
        ),
        (
            &format!("{SERGEANT}crashLoopBackOff: {{initialPeriod: 1s}}\n"),
            "sergeant.crashLoopBackOff",
            Owner::PodWorkers,
        ),
        (
            &format!("{SERGEANT}garbageCollection: {{period: 10s, maxDeadContainers: 50}}\n"),
            "sergeant.garbageCollection",
            Owner::ContainerGc,
        ),
    ];
    for (new, field, owner) in cases {
        assert_eq!(changes("", new), one(field, Apply::Live(owner)), "{new}");
    }
    assert_eq!(
        changes("", "evictionPressureTransitionPeriod: 1m\n"),
        one(
            "evictionPressureTransitionPeriod",
            Apply::Live(Owner::EvictionManager)
        ),
        "the eviction manager reads its fields at every decision"
    );
}

#[test]
fn image_gc_fields_are_applied_live_by_the_image_collector() {
    for (new, field) in [
        (
            "imageGCHighThresholdPercent: 90\n",
            "imageGCHighThresholdPercent",
        ),
        (
            "imageGCLowThresholdPercent: 70\n",
            "imageGCLowThresholdPercent",
        ),
        ("imageMinimumGCAge: 5m\n", "imageMinimumGCAge"),
        ("imageMaximumGCAge: 24h\n", "imageMaximumGCAge"),
    ] {
        assert_eq!(
            changes("", new),
            one(field, Apply::Live(Owner::ImageGc)),
            "{new}"
        );
    }
}

#[test]
fn other_fields_require_a_restart() {
    for (new, field) in [
        ("port: 10260\n", "port"),
        ("address: 127.0.0.1\n", "address"),
        ("tlsMinVersion: VersionTLS13\n", "tlsMinVersion"),
        (
            "authentication: {anonymous: {enabled: true}}\n",
            "authentication",
        ),
        ("cgroupRoot: /other\n", "cgroupRoot"),
        ("kubeReserved: {memory: 1Gi}\n", "kubeReserved"),
        ("featureGates: {PodLevelResources: false}\n", "featureGates"),
        ("logging: {format: json}\n", "logging.format"),
    ] {
        let result = diff(&config(""), &config(new));
        assert_eq!(
            result.changes,
            vec![FieldChange {
                field: field.to_string(),
                apply: Apply::RestartRequired
            }],
            "{new}"
        );
        assert!(result.requires_restart());
    }
}

#[test]
fn command_line_changes_require_a_restart() {
    let text = HEAD;
    let old = NodeConfig::parse(text, "d.yaml", &FlagOverrides::default()).unwrap();
    let flags = FlagOverrides {
        hostname_override: Some("other".to_string()),
        root_dir: Some("/srv/kubelet".into()),
        ..FlagOverrides::default()
    };
    let new = NodeConfig::parse(text, "d.yaml", &flags).unwrap();
    let fields: Vec<(String, Apply)> = diff(&old, &new)
        .changes
        .into_iter()
        .map(|c| (c.field, c.apply))
        .collect();
    assert_eq!(
        fields,
        vec![
            (
                "commandLine.hostnameOverride".to_string(),
                Apply::RestartRequired
            ),
            ("commandLine.rootDir".to_string(), Apply::RestartRequired),
        ]
    );
}

#[test]
fn several_changes_are_all_reported() {
    let result = changes(
        "maxPods: 10\nport: 10250\n",
        "maxPods: 20\nport: 10251\nlogging: {verbosity: 2, format: json}\n",
    );
    assert_eq!(
        result,
        vec![
            ("logging.format".to_string(), Apply::RestartRequired),
            ("logging.verbosity".to_string(), Apply::Live(Owner::Logging)),
            ("maxPods".to_string(), Apply::Live(Owner::PodManager)),
            ("port".to_string(), Apply::RestartRequired),
        ]
    );
}

#[test]
fn diff_serializes_with_kebab_case_owners() {
    let result = diff(&config(""), &config("maxPods: 20\nport: 1\n"));
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        serde_json::json!({"changes": [
            {"field": "maxPods", "apply": {"live": "pod-manager"}},
            {"field": "port", "apply": "restart-required"},
        ]})
    );
}

#[test]
fn adopting_a_reload_takes_live_fields_and_keeps_restart_only_ones() {
    let running = config("port: 10250\nmaxPods: 110\nlogging: {format: text, verbosity: 1}\n");
    let edited = config("port: 11250\nmaxPods: 30\nevictionHard: {memory.available: 1Gi}\nlogging: {format: json, verbosity: 4}\n");
    let changes = diff(&running, &edited);
    let active = running.adopt_live(&edited, &changes).unwrap();
    assert_eq!(
        active.kubelet.port, 10250,
        "restart-only field keeps its running value"
    );
    assert_eq!(
        active.kubelet.logging.format,
        running.kubelet.logging.format
    );
    assert_eq!(active.kubelet.max_pods, 30);
    assert_eq!(active.kubelet.logging.verbosity, 4);
    assert_eq!(active.kubelet.eviction_hard, edited.kubelet.eviction_hard);
    assert!(diff(&active, &edited)
        .changes
        .iter()
        .all(|c| c.apply == Apply::RestartRequired));
}

#[test]
fn adopting_a_reload_that_only_changes_live_fields_is_the_new_config() {
    let running = config("maxPods: 110\n");
    let edited = config("maxPods: 30\nimageGCHighThresholdPercent: 90\n");
    let active = running
        .adopt_live(&edited, &diff(&running, &edited))
        .unwrap();
    assert_eq!(active, edited);
}

#[test]
fn the_supervision_policy_takes_effect_at_the_next_start() {
    let new = format!("{SERGEANT}supervision: {{restartIntensity: 9}}\n");
    assert_eq!(
        changes("", &new),
        one("sergeant.supervision", Apply::RestartRequired)
    );
}
