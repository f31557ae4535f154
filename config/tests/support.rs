//! Every upstream field sergeant accepts is acted on, refused with file, line, field and reason,
//! or accepted with a warning naming its line: nothing is silently ignored.

use sergeant_config::{ConfigError, ConfigWarning, FlagOverrides, NodeConfig};

const HEAD: &str = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

fn parse(body: &str) -> Result<NodeConfig, ConfigError> {
    NodeConfig::parse(
        &format!("{HEAD}{body}"),
        "k.yaml",
        &FlagOverrides::default(),
    )
}

fn refused(body: &str) -> ConfigError {
    match parse(body) {
        Ok(_) => panic!("accepted: {body}"),
        Err(error) => error,
    }
}

/// The warning about `field`.
fn warning_about<'a>(config: &'a NodeConfig, field: &str) -> &'a ConfigWarning {
    config
        .warnings
        .iter()
        .find(|w| w.field == field)
        .unwrap_or_else(|| panic!("a warning about {field}: {:?}", config.warnings))
}

/// Checks that `config` has no warning about a field `matches` picks.
fn assert_quiet_about(config: &NodeConfig, matches: impl Fn(&str) -> bool) {
    assert!(
        config.warnings.iter().all(|w| !matches(&w.field)),
        "{:?}",
        config.warnings
    );
}

#[test]
fn an_upstream_field_asking_for_what_sergeant_does_is_accepted_quietly() {
    let config = parse(
        "maxPods: 20\ncpuManagerPolicy: none\nenableServer: true\nstreamingConnectionIdleTimeout: 4h0m0s\nmemorySwap:\n  swapBehavior: NoSwap\nport: 10250\n",
    )
    .unwrap();
    assert_eq!(config.kubelet.max_pods, 20);
    assert_eq!(
        config.kubelet.port, 10250,
        "keys after a screened block still parse"
    );
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn an_upstream_field_sergeant_cannot_honour_is_refused_at_its_line() {
    let error = refused("maxPods: 20\ncpuManagerPolicy: static\n");
    assert_eq!(error.line(), Some(4), "{error}");
    assert_eq!(error.field(), Some("cpuManagerPolicy"));
    assert!(
        error
            .to_string()
            .contains("only the none CPU manager policy is built"),
        "{error}"
    );
    let error = refused("memorySwap:\n  swapBehavior: LimitedSwap\n");
    assert_eq!(error.field(), Some("memorySwap.swapBehavior"), "{error}");
    assert_eq!(error.line(), Some(4), "{error}");
}

#[test]
fn an_optional_upstream_field_is_accepted_with_a_warning_at_its_line() {
    let config =
        parse("eventRecordQPS: 5\nlogging:\n  flushFrequency: 1s\n  verbosity: 3\n").unwrap();
    assert_eq!(config.kubelet.logging.verbosity, 3);
    let warning = warning_about(&config, "eventRecordQPS");
    assert_eq!(warning.line, Some(3));
    assert!(
        warning
            .to_string()
            .starts_with("k.yaml:3: eventRecordQPS: 5 is not supported"),
        "{warning}"
    );
    let warning = warning_about(&config, "logging.flushFrequency");
    assert_eq!(warning.line, Some(5));
}

#[test]
fn certificate_bootstrap_and_rotation_are_refused_with_the_way_out() {
    let error = refused("rotateCertificates: true\n");
    assert_eq!(
        (error.line(), error.field()),
        (Some(3), Some("rotateCertificates"))
    );
    assert!(
        error.to_string().contains("rotateCertificates: false"),
        "{error}"
    );
    let error = refused("serverTLSBootstrap: true\n");
    assert_eq!(error.field(), Some("serverTLSBootstrap"));
    assert!(error.to_string().contains("tlsCertFile"), "{error}");
}

#[test]
fn feature_gates_are_checked_against_the_pinned_release() {
    let error = refused("featureGates:\n  NoSuchGate: true\n");
    assert_eq!(
        (error.line(), error.field()),
        (Some(4), Some("featureGates.NoSuchGate"))
    );
    let error = refused("featureGates:\n  InPlacePodVerticalScaling: false\n");
    assert!(error.to_string().contains("locked to true"), "{error}");
    let config = parse("featureGates:\n  PodLevelResources: true\n  InPlacePodVerticalScalingExclusiveCPUs: false\n").unwrap();
    assert!(!config
        .warnings
        .iter()
        .any(|w| w.field.starts_with("featureGates")));
    let config = parse("featureGates:\n  InPlacePodVerticalScalingExclusiveCPUs: true\n").unwrap();
    let warning = warning_about(
        &config,
        "featureGates.InPlacePodVerticalScalingExclusiveCPUs",
    );
    assert_eq!(warning.line, Some(4));
    // A gate sergeant switches is acted on, not warned about.
    let config = parse("featureGates:\n  PodLevelResources: false\n").unwrap();
    assert!(!config
        .warnings
        .iter()
        .any(|w| w.field.starts_with("featureGates")));
}

#[test]
fn the_systemd_cgroup_driver_is_refused_at_its_line() {
    let error = refused("maxPods: 20\ncgroupDriver: systemd\n");
    assert_eq!(
        (error.line(), error.field()),
        (Some(4), Some("cgroupDriver"))
    );
    assert!(error.to_string().contains("use cgroupfs"), "{error}");
}

#[test]
fn enforcing_reserved_cgroups_is_refused_and_pods_is_warned() {
    let error = refused("enforceNodeAllocatable: [pods, system-reserved]\n");
    assert_eq!(error.field(), Some("enforceNodeAllocatable"));
    let config = parse(
        "enforceNodeAllocatable: [none]\nshutdownGracePeriod: 30s\nsystemReserved:\n  cpu: 100m\n  pid: \"100\"\n",
    )
    .unwrap();
    let fields: Vec<&str> = config.warnings.iter().map(|w| w.field.as_str()).collect();
    assert_eq!(fields, vec!["systemReserved.pid", "shutdownGracePeriod"]);
    assert_eq!(warning_about(&config, "systemReserved.pid").line, Some(7));
}

#[test]
fn an_allocatable_memory_threshold_is_warned_as_never_met_only_without_the_pods_cgroup() {
    let thresholds =
        "evictionHard:\n  memory.available: 100Mi\n  allocatableMemory.available: 50Mi\n";
    let config = parse(&format!(
        "cgroupsPerQOS: false\nenforceNodeAllocatable: [none]\n{thresholds}"
    ))
    .unwrap();
    let warning = warning_about(&config, "evictionHard.allocatableMemory.available");
    assert!(warning.reason.contains("never met"), "{warning}");
    for observed in [thresholds, "evictionHard:\n  memory.available: 100Mi\n"] {
        assert_quiet_about(&parse(observed).unwrap(), |field| {
            field.contains("allocatableMemory")
        });
    }
}

#[test]
fn image_garbage_collection_settings_are_quiet() {
    let config = parse(
        "imageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 50\n\
         imageMinimumGCAge: 1m\nimageMaximumGCAge: 24h\n",
    )
    .unwrap();
    assert_quiet_about(&config, |field| field.starts_with("image"));
}
