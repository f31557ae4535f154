//! Every class of bad input is reported as one line naming the file, line, field and reason.

use sergeant_config::{ConfigError, FlagOverrides, NodeConfig};

const FILE: &str = "deploy/x.yaml";
const HEAD: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

fn error(text: &str) -> ConfigError {
    NodeConfig::parse(text, FILE, &FlagOverrides::default()).unwrap_err()
}

/// Asserts the whole message and the structured accessors.
fn check(text: &str, line: usize, field: Option<&str>, message: &str) {
    let error = error(text);
    assert_eq!(error.to_string(), message);
    assert_eq!(error.file(), Some(FILE));
    assert_eq!(error.line(), Some(line), "{error}");
    assert_eq!(error.field(), field, "{error}");
}

#[test]
fn malformed_yaml() {
    check(
        &format!("{HEAD}maxPods: 3\n  evictionHard: x\n"),
        4,
        None,
        "deploy/x.yaml:4:15: malformed YAML: mapping values are not allowed in this context",
    );
}

#[test]
fn repeated_key_points_at_the_repetition() {
    check(
        &format!("{HEAD}maxPods: 1\nport: 10250\nmaxPods: 2\n"),
        5,
        None,
        "deploy/x.yaml:5:1: malformed YAML: duplicate entry with key \"maxPods\"",
    );
}

#[test]
fn unknown_map_key_of_a_closed_set() {
    check(
        &format!("{HEAD}kubeReserved: {{gpu: 1}}\n"),
        3,
        Some("kubeReserved"),
        "deploy/x.yaml:3:16: kubeReserved: unknown variant \"gpu\", expected one of \"cpu\", \"memory\", \"ephemeral-storage\", \"pid\"",
    );
}

#[test]
fn relation_across_documents_points_at_the_key_that_is_written() {
    // No SergeantConfiguration: its default initialPeriod (10s) exceeds the kubelet's cap.
    check(
        &format!("{HEAD}crashLoopBackOff:\n  maxContainerRestartPeriod: 5s\n"),
        4,
        Some("crashLoopBackOff.initialPeriod"),
        "deploy/x.yaml:4:3: crashLoopBackOff.initialPeriod: 10s (SergeantConfiguration) must not exceed crashLoopBackOff.maxContainerRestartPeriod (5s) of KubeletConfiguration",
    );
}

#[test]
fn unknown_field_with_suggestion() {
    check(
        &format!("{HEAD}maxPods: 3\nevictonHard: {{}}\n"),
        4,
        Some("evictonHard"),
        "deploy/x.yaml:4:1: unknown field \"evictonHard\" in KubeletConfiguration (did you mean \"evictionHard\"?)",
    );
}

#[test]
fn unknown_nested_field_names_its_parent() {
    check(
        &format!("{HEAD}authentication:\n  webhook:\n    enabeld: true\n"),
        5,
        Some("authentication.webhook.enabeld"),
        "deploy/x.yaml:5:5: unknown field \"enabeld\" in authentication.webhook (did you mean \"enabled\"?)",
    );
}

#[test]
fn unknown_field_far_from_any_name_gets_no_suggestion() {
    check(
        &format!("{HEAD}zzz: 1\n"),
        3,
        Some("zzz"),
        "deploy/x.yaml:3:1: unknown field \"zzz\" in KubeletConfiguration",
    );
}

#[test]
fn wrong_type() {
    check(
        &format!("{HEAD}maxPods: many\n"),
        3,
        Some("maxPods"),
        "deploy/x.yaml:3:10: maxPods: invalid type: string \"many\", expected an integer",
    );
}

#[test]
fn unknown_enum_value() {
    check(
        &format!("{HEAD}cgroupDriver: systemdd\n"),
        3,
        Some("cgroupDriver"),
        "deploy/x.yaml:3:15: cgroupDriver: unknown variant \"systemdd\", expected \"cgroupfs\" or \"systemd\"",
    );
}

#[test]
fn unknown_change_detection_strategy() {
    check(
        &format!("{HEAD}configMapAndSecretChangeDetectionStrategy: Poll\n"),
        3,
        Some("configMapAndSecretChangeDetectionStrategy"),
        "deploy/x.yaml:3:44: configMapAndSecretChangeDetectionStrategy: unknown variant \"Poll\", expected one of \"Get\", \"Cache\", \"Watch\"",
    );
}

#[test]
fn unparsable_quantity() {
    check(
        &format!("{HEAD}maxPods: 3\nevictionHard:\n  nodefs.available: 10%\n  memory.available: \"lots\"\n"),
        6,
        Some("evictionHard.memory.available"),
        "deploy/x.yaml:6:21: evictionHard.memory.available: \"lots\" is not a quantity or a percentage",
    );
}

#[test]
fn unparsable_quantity_in_flow_mapping() {
    check(
        &format!("{HEAD}evictionHard: {{memory.available: \"lots\"}}\n"),
        3,
        Some("evictionHard.memory.available"),
        "deploy/x.yaml:3:34: evictionHard.memory.available: \"lots\" is not a quantity or a percentage",
    );
}

#[test]
fn percentage_out_of_range() {
    check(
        &format!("{HEAD}evictionSoft:\n  nodefs.available: 150%\n"),
        4,
        Some("evictionSoft.nodefs.available"),
        "deploy/x.yaml:4:21: evictionSoft.nodefs.available: \"150%\" is out of range: a percentage must be between 0% and 100%",
    );
}

#[test]
fn unknown_eviction_signal() {
    check(
        &format!("{HEAD}evictionHard:\n  memory.avail: 1Gi\n"),
        4,
        Some("evictionHard.memory.avail"),
        "deploy/x.yaml:4:3: evictionHard.memory.avail: unknown eviction signal \"memory.avail\" (known signals: memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, containerfs.available, containerfs.inodesFree, pid.available, allocatableMemory.available)",
    );
}

#[test]
fn unparsable_duration() {
    check(
        &format!("{HEAD}syncFrequency: 10\n"),
        3,
        Some("syncFrequency"),
        "deploy/x.yaml:3:16: syncFrequency: invalid type: integer \"10\", expected a duration string such as \"1m30s\"",
    );
    check(
        &format!("{HEAD}syncFrequency: 10 s\n"),
        3,
        Some("syncFrequency"),
        "deploy/x.yaml:3:16: syncFrequency: \"10 s\" is not a duration: unknown unit \" s\" (use ns, us, ms, s, m or h)",
    );
}

#[test]
fn out_of_range_values_point_at_their_key() {
    check(
        &format!("{HEAD}# the API port\nport: 0\n"),
        4,
        Some("port"),
        "deploy/x.yaml:4:1: port: 0 is out of range: must be from 1 to 65535",
    );
    check(
        &format!("{HEAD}maxPods: 0\n"),
        3,
        Some("maxPods"),
        "deploy/x.yaml:3:1: maxPods: 0 is out of range: must be 1 or more",
    );
    check(
        &format!("{HEAD}containerLogMaxFiles: 1\n"),
        3,
        Some("containerLogMaxFiles"),
        "deploy/x.yaml:3:1: containerLogMaxFiles: 1 is out of range: must be 2 or more",
    );
    check(
        &format!("{HEAD}containerLogMaxWorkers: 0\n"),
        3,
        Some("containerLogMaxWorkers"),
        "deploy/x.yaml:3:1: containerLogMaxWorkers: 0 is out of range: must be 1 or more",
    );
    check(
        &format!("{HEAD}containerLogMonitorInterval: 2s\n"),
        3,
        Some("containerLogMonitorInterval"),
        "deploy/x.yaml:3:1: containerLogMonitorInterval: 2s is out of range: must be 3s or more",
    );
    check(
        &format!("{HEAD}podLogsDir: var/log/pods\n"),
        3,
        Some("podLogsDir"),
        "deploy/x.yaml:3:1: podLogsDir: \"var/log/pods\" is not an absolute path",
    );
    check(
        &format!("{HEAD}imageGCHighThresholdPercent: 101\n"),
        3,
        Some("imageGCHighThresholdPercent"),
        "deploy/x.yaml:3:1: imageGCHighThresholdPercent: 101 is out of range: must be from 0 to 100",
    );
    check(
        &format!("{HEAD}healthzPort: 70000\n"),
        3,
        Some("healthzPort"),
        "deploy/x.yaml:3:14: healthzPort: invalid value: integer \"70000\", expected an integer from 0 to 65535",
    );
    check(
        &format!("{HEAD}logging:\n  verbosity: -1\n"),
        4,
        Some("logging.verbosity"),
        "deploy/x.yaml:4:14: logging.verbosity: invalid type: integer \"-1\", expected a non-negative integer",
    );
}

#[test]
fn relations_between_fields() {
    // The low threshold is a default, so the error points at the high one the file sets.
    check(
        &format!("{HEAD}imageGCHighThresholdPercent: 70\n"),
        3,
        Some("imageGCLowThresholdPercent"),
        "deploy/x.yaml:3:1: imageGCLowThresholdPercent: 80 must be lower than imageGCHighThresholdPercent (70)",
    );
    check(
        &format!("{HEAD}imageMaximumGCAge: 1m\n"),
        3,
        Some("imageMaximumGCAge"),
        "deploy/x.yaml:3:1: imageMaximumGCAge: 1m0s must be 0 (no maximum) or longer than imageMinimumGCAge (2m0s)",
    );
    check(
        &format!("{HEAD}evictionSoft:\n  nodefs.available: 15%\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 1m\n"),
        4,
        Some("evictionSoft.nodefs.available"),
        "deploy/x.yaml:4:3: evictionSoft.nodefs.available: has no grace period: add evictionSoftGracePeriod.nodefs.available",
    );
    // Flow mappings and quoted keys are found too.
    check(
        &format!("{HEAD}maxPods: 3\nevictionSoft: {{\"memory.available\": 1Gi}}\n"),
        4,
        Some("evictionSoft.memory.available"),
        "deploy/x.yaml:4:16: evictionSoft.memory.available: has no grace period: add evictionSoftGracePeriod.memory.available",
    );
    check(
        &format!("{HEAD}shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n"),
        4,
        Some("shutdownGracePeriodCriticalPods"),
        "deploy/x.yaml:4:1: shutdownGracePeriodCriticalPods: 20s must not exceed shutdownGracePeriod (10s)",
    );
}

#[test]
fn unknown_document_kind() {
    check(
        &format!("{HEAD}---\napiVersion: v1\nkind: Pod\n"),
        5,
        Some("kind"),
        "deploy/x.yaml:5:1: kind: unknown document kind \"Pod\" (expected KubeletConfiguration or SergeantConfiguration)",
    );
}

#[test]
fn wrong_api_version() {
    check(
        "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n",
        1,
        Some("apiVersion"),
        "deploy/x.yaml:1:1: apiVersion: \"kubelet.config.k8s.io/v1\" is not supported for kind KubeletConfiguration (expected \"kubelet.config.k8s.io/v1beta1\")",
    );
}

#[test]
fn missing_kubelet_document() {
    let error = error("apiVersion: sergeant.dev/v1alpha1\nkind: SergeantConfiguration\n");
    assert_eq!(
        error.to_string(),
        "deploy/x.yaml: no KubeletConfiguration document (one with apiVersion: kubelet.config.k8s.io/v1beta1 and kind: KubeletConfiguration is required)"
    );
    assert_eq!(error.line(), None);
}

#[test]
fn duplicate_document() {
    check(
        &format!("{HEAD}---\n{HEAD}"),
        5,
        Some("kind"),
        "deploy/x.yaml:5:1: kind: a second KubeletConfiguration document (the first starts at line 1)",
    );
}

#[test]
fn errors_in_the_second_document_have_absolute_lines() {
    let sergeant = "apiVersion: sergeant.dev/v1alpha1\nkind: SergeantConfiguration\n";
    let first = format!("{HEAD}maxPods: 10\n\n---\n");
    check(
        &format!("{first}{sergeant}supervision:\n  restartIntensity: lots\n"),
        9,
        Some("supervision.restartIntensity"),
        "deploy/x.yaml:9:21: supervision.restartIntensity: invalid type: string \"lots\", expected a non-negative integer",
    );
    check(
        &format!("{first}{sergeant}runtimeAdaptor: fake\n"),
        8,
        Some("runtimeAdaptor"),
        "deploy/x.yaml:8:1: unknown field \"runtimeAdaptor\" in SergeantConfiguration (did you mean \"runtimeAdapter\"?)",
    );
    check(
        &format!("{first}{sergeant}supervision:\n  backoffInitial: 1s\n  backoffMax: 500ms\n"),
        10,
        Some("supervision.backoffMax"),
        "deploy/x.yaml:10:3: supervision.backoffMax: 500ms must not be shorter than supervision.backoffInitial (1s)",
    );
    check(
        &format!("{first}{sergeant}supervision: [\n"),
        9,
        None,
        "deploy/x.yaml:9:1: malformed YAML: did not find expected node content, while parsing a flow node",
    );
}

#[test]
fn unreadable_file() {
    let error = NodeConfig::load(
        std::path::Path::new("deploy/does-not-exist.yaml"),
        &FlagOverrides::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "deploy/does-not-exist.yaml: cannot read: No such file or directory"
    );
    assert_eq!(error.line(), None);
}

#[test]
fn garbage_collection_limits_and_period_are_checked() {
    let sergeant = "---\napiVersion: sergeant.dev/v1alpha1\nkind: SergeantConfiguration\n";
    check(
        &format!("{HEAD}{sergeant}garbageCollection:\n  maxDeadPerContainer: -2\n"),
        7,
        Some("garbageCollection.maxDeadPerContainer"),
        "deploy/x.yaml:7:3: garbageCollection.maxDeadPerContainer: -2 is out of range: must be -1 or more",
    );
    check(
        &format!("{HEAD}{sergeant}garbageCollection:\n  maxDeadContainers: -5\n"),
        7,
        Some("garbageCollection.maxDeadContainers"),
        "deploy/x.yaml:7:3: garbageCollection.maxDeadContainers: -5 is out of range: must be -1 or more",
    );
    check(
        &format!("{HEAD}{sergeant}garbageCollection:\n  period: 0s\n"),
        7,
        Some("garbageCollection.period"),
        "deploy/x.yaml:7:3: garbageCollection.period: must be longer than 0s",
    );
    check(
        &format!("{HEAD}{sergeant}garbageCollection:\n  maxDeadPerContainers: 2\n"),
        7,
        Some("garbageCollection.maxDeadPerContainers"),
        "deploy/x.yaml:7:3: unknown field \"maxDeadPerContainers\" in garbageCollection (did you mean \"maxDeadPerContainer\"?)",
    );
}

#[test]
fn runtime_endpoints_are_parsed_at_load() {
    let message = error(&format!(
        "{HEAD}containerRuntimeEndpoint: tcp://127.0.0.1:1234\n"
    ))
    .to_string();
    assert!(
        message.starts_with("deploy/x.yaml:3:")
            && message.contains("containerRuntimeEndpoint: ")
            && message.contains("unsupported scheme \"tcp\""),
        "{message}"
    );
    let message = error(&format!("{HEAD}imageServiceEndpoint: relative.sock\n")).to_string();
    assert!(
        message.starts_with("deploy/x.yaml:3:")
            && message.contains("imageServiceEndpoint: ")
            && message.contains("must be absolute"),
        "{message}"
    );
    let message = error(&format!("{HEAD}containerRuntimeEndpoint: \"\"\n")).to_string();
    assert!(
        message.contains("containerRuntimeEndpoint: ") && message.contains("is empty"),
        "{message}"
    );
}

#[test]
fn an_unsafe_sysctl_pattern_of_the_whole_node_is_named() {
    let error = error(&format!(
        "{HEAD}allowedUnsafeSysctls:\n- kernel.msg*\n- vm.swappiness\n"
    ));
    let text = error.to_string();
    assert!(text.starts_with("deploy/x.yaml:3"), "{text}");
    assert!(
        text.contains(
            "allowedUnsafeSysctls: entry 2: \"vm.swappiness\" is not known to be namespaced"
        ),
        "{text}"
    );
}

#[test]
fn a_malformed_pod_cidr_is_named() {
    for (value, reason) in [
        ("10.244.7.0", "\"10.244.7.0\" is not a CIDR: no prefix length (/N)"),
        ("10.244.7/24", "\"10.244.7/24\" is not a CIDR: \"10.244.7\" is not an IP address"),
        ("fd00::/129", "\"fd00::/129\" is not a CIDR: the prefix length must be 0 to 128"),
        (
            "10.244.7.0/24,10.244.8.0/24",
            "\"10.244.7.0/24,10.244.8.0/24\" must be one CIDR, or an IPv4 and an IPv6 CIDR separated by a comma",
        ),
    ] {
        let text = error(&format!("{HEAD}podCIDR: {value:?}\n")).to_string();
        assert!(text.starts_with("deploy/x.yaml:3"), "{text}");
        assert!(text.contains(&format!("podCIDR: {reason}")), "{value}: {text}");
    }
}

#[test]
fn a_dual_stack_pod_cidr_is_accepted() {
    let text = format!("{HEAD}podCIDR: 10.244.7.0/24,fd00:7::/64\n");
    let config = NodeConfig::parse(&text, FILE, &FlagOverrides::default()).expect("accepted");
    assert_eq!(
        config.kubelet.pod_cidr.as_deref(),
        Some("10.244.7.0/24,fd00:7::/64")
    );
}

#[test]
fn a_back_off_cap_is_refused_while_its_feature_gate_is_off() {
    let text = error(&format!(
        "{HEAD}featureGates:\n  KubeletCrashLoopBackOffMax: false\ncrashLoopBackOff:\n  maxContainerRestartPeriod: 10s\n"
    ))
    .to_string();
    assert!(text.starts_with("deploy/x.yaml:6"), "{text}");
    assert!(
        text.contains("crashLoopBackOff.maxContainerRestartPeriod: must not be set while the feature gate KubeletCrashLoopBackOffMax is off"),
        "{text}"
    );
    let gate_on = format!("{HEAD}crashLoopBackOff:\n  maxContainerRestartPeriod: 10s\n");
    NodeConfig::parse(&gate_on, FILE, &FlagOverrides::default())
        .expect("accepted with the gate on");
}
