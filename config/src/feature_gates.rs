//! The feature gates of Kubernetes v1.37.2 (the release the control plane is pinned to), as
//! its kubelet knows them: name, default, maturity and whether the value is locked. The entry
//! point is [`check`], which refuses what upstream refuses (an unknown name, a locked gate set
//! against its lock) and says which accepted settings sergeant does not act on; [`enabled`]
//! answers whether a gate is on for a configuration. The gates sergeant switches its behaviour
//! by are [`SWITCHED`].
//!
//! The table was generated from the gate registry of k8s.io/kubernetes v1.37.2 (the kubelet's
//! `DefaultFeatureGate`, logging gates included); it lists facts, not code.

use std::collections::BTreeMap;

use crate::kubelet::KubeletConfiguration;
use crate::validate::Violation;
use crate::warning::Notice;

/// The release the table describes, named in messages.
pub const GATES_RELEASE: &str = "v1.37.2";

/// A gate's default value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    On,
    Off,
}

/// A gate's maturity in the release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Alpha,
    Beta,
    Ga,
    Deprecated,
}

/// Whether a gate may be set against its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lock {
    Open,
    Locked,
}

use Lock::{Locked, Open};
use Setting::{Off, On};
use Stage::{Alpha, Beta, Deprecated, Ga};

/// Every gate of the release, sorted by name.
const GATES: &[(&str, Setting, Stage, Lock)] = &[
    ("APIResponseCompression", On, Beta, Open),
    ("APIServerIdentity", On, Beta, Open),
    ("APIServerWebhookAuthenticationToken", Off, Alpha, Open),
    ("APIServingWithRoutine", Off, Alpha, Open),
    ("AggregatedDiscoveryRemoveBetaType", On, Deprecated, Locked),
    ("AllAlpha", Off, Alpha, Open),
    ("AllBeta", Off, Beta, Open),
    ("AllowDNSOnlyNodeCSR", Off, Deprecated, Open),
    (
        "AllowInsecureKubeletCertificateSigningRequests",
        Off,
        Deprecated,
        Open,
    ),
    (
        "AllowOverwriteTerminationGracePeriodSeconds",
        Off,
        Deprecated,
        Locked,
    ),
    ("AllowParsingUserUIDFromCertAuth", On, Beta, Open),
    ("AllowServiceExternalIPs", On, Ga, Open),
    ("AllowUnsafeMalformedObjectDeletion", On, Beta, Open),
    ("AtomicFIFO", On, Beta, Open),
    ("AtomicWriteVolumeUserFields", Off, Alpha, Open),
    (
        "AuthorizePodWebsocketUpgradeCreatePermission",
        On,
        Beta,
        Open,
    ),
    ("CBORServingAndStorage", Off, Alpha, Open),
    ("CPUManagerPolicyAlphaOptions", Off, Alpha, Open),
    ("CPUManagerPolicyBetaOptions", On, Beta, Open),
    ("CPUManagerPolicyOptions", On, Ga, Locked),
    ("CRDObservedGenerationTracking", On, Beta, Open),
    ("CRDValidationRatcheting", On, Ga, Locked),
    ("CRIListStreaming", Off, Alpha, Open),
    ("CSIServiceAccountTokenSecrets", On, Ga, Locked),
    ("CSIVolumeHealth", Off, Alpha, Open),
    (
        "ChangeContainerStatusOnKubeletRestart",
        Off,
        Deprecated,
        Open,
    ),
    ("ClearingNominatedNodeNameAfterBinding", On, Beta, Open),
    ("ClientsAllowCARotation", On, Beta, Open),
    ("ClientsAllowCBOR", Off, Alpha, Open),
    ("ClientsAllowTLSCacheGC", On, Beta, Open),
    ("ClientsPreferCBOR", Off, Alpha, Open),
    (
        "CloudControllerManagerWatchBasedRoutesReconciliation",
        Off,
        Alpha,
        Open,
    ),
    ("CloudControllerManagerWebhook", Off, Alpha, Open),
    ("ClusterTrustBundle", On, Ga, Open),
    ("ClusterTrustBundleProjection", On, Ga, Open),
    ("ComponentFlagz", On, Beta, Open),
    ("ComponentStatusz", On, Beta, Open),
    ("CompositePodGroup", Off, Alpha, Open),
    ("ConcurrentWatchObjectDecode", On, Beta, Open),
    (
        "ConsistentListFromCacheSkipTimeoutFallback",
        Off,
        Alpha,
        Open,
    ),
    ("ConstrainedImpersonation", On, Beta, Open),
    ("ContainerCheckpoint", On, Beta, Open),
    ("ContainerRestartRules", On, Beta, Open),
    ("ContainerStopSignals", Off, Alpha, Open),
    ("ContextualLogging", On, Beta, Open),
    ("CoordinatedLeaderElection", Off, Beta, Open),
    ("CrossNamespaceVolumeDataSource", Off, Alpha, Open),
    ("CustomCPUCFSQuotaPeriod", On, Ga, Open),
    ("CustomResourceFieldSelectors", On, Ga, Locked),
    ("DRAAdminAccess", On, Ga, Locked),
    ("DRAConsumableCapacity", On, Beta, Open),
    ("DRADerivedAttributes", Off, Alpha, Open),
    ("DRADeviceBindingConditions", On, Beta, Open),
    ("DRADeviceCompatibilityGroups", Off, Alpha, Open),
    ("DRADeviceTaintRules", On, Ga, Open),
    ("DRADeviceTaints", On, Ga, Open),
    ("DRAExtendedResource", On, Ga, Locked),
    ("DRAFractionalCapacityRange", Off, Beta, Open),
    ("DRAListTypeAttributes", Off, Alpha, Open),
    ("DRANodeAllocatableResources", Off, Alpha, Open),
    ("DRAOptionalNodeOperations", Off, Alpha, Open),
    ("DRAPartitionableDevices", On, Beta, Open),
    ("DRAPartitionableDevicesType", Off, Alpha, Open),
    ("DRAPrioritizedList", On, Ga, Locked),
    ("DRAResourceClaimDeviceStatus", On, Ga, Locked),
    (
        "DRAResourceClaimGranularStatusAuthorization",
        On,
        Beta,
        Open,
    ),
    ("DRAResourcePoolStatus", Off, Alpha, Open),
    ("DRASchedulerFilterTimeout", On, Beta, Open),
    ("DRAWorkloadResourceClaims", Off, Beta, Open),
    ("DeclarativeValidation", On, Ga, Locked),
    ("DeclarativeValidationBeta", On, Beta, Open),
    ("DeclarativeValidationTakeover", Off, Deprecated, Locked),
    ("DefaultPodSysctls", Off, Alpha, Open),
    ("DeploymentReplicaSetTerminatingReplicas", On, Beta, Open),
    ("DetectCacheInconsistency", On, Beta, Open),
    ("DisableAllocatorDualWrite", On, Ga, Locked),
    ("DisableCPUQuotaWithExclusiveCPUs", On, Deprecated, Locked),
    ("DisableNodeKubeProxyVersion", On, Deprecated, Locked),
    ("DynamicResourceAllocation", On, Ga, Locked),
    ("EmptyDirVolumeMode", Off, Alpha, Open),
    ("EnvFiles", On, Beta, Open),
    ("EtcdRangeStream", On, Beta, Open),
    ("EventedPLEG", Off, Alpha, Open),
    ("EvictionRequestAPI", Off, Alpha, Open),
    ("ExcludeAdmissionWebhookVirtualResources", On, Beta, Open),
    ("ExecProbeTimeout", On, Ga, Locked),
    ("ExtendWebSocketsToKubelet", On, Beta, Open),
    ("ExternalServiceAccountTokenSigner", On, Ga, Locked),
    ("GRPCContainerProbeTLS", Off, Alpha, Open),
    ("GenericWorkload", Off, Beta, Open),
    ("GitRepoVolumeDriver", Off, Deprecated, Locked),
    ("GracefulNodeShutdown", On, Beta, Open),
    ("GracefulNodeShutdownBasedOnPodPriority", On, Beta, Open),
    ("H2CContainerProbe", Off, Alpha, Open),
    ("HPAConfigurableTolerance", On, Ga, Locked),
    ("HPAGeneration", On, Beta, Open),
    ("HPAOptimizedSelectorStore", On, Beta, Open),
    ("HPAScaleToZero", On, Beta, Open),
    ("HostnameOverride", On, Ga, Locked),
    ("HugepageAwareEviction", On, Beta, Open),
    ("ImageMaximumGCAge", On, Ga, Locked),
    ("ImageVolume", On, Ga, Locked),
    ("ImageVolumeWithDigest", Off, Alpha, Open),
    ("InOrderInformers", On, Ga, Locked),
    ("InOrderInformersBatchProcess", On, Beta, Open),
    ("InPlacePodLevelResourcesVerticalScaling", On, Beta, Open),
    ("InPlacePodVerticalScaling", On, Ga, Locked),
    ("InPlacePodVerticalScalingExclusiveCPUs", Off, Alpha, Open),
    ("InPlacePodVerticalScalingExclusiveMemory", Off, Alpha, Open),
    ("InPlacePodVerticalScalingInitContainers", On, Ga, Locked),
    (
        "InPlacePodVerticalScalingMemoryBackedVolumes",
        Off,
        Alpha,
        Open,
    ),
    (
        "InPlacePodVerticalScalingSchedulerPreemption",
        Off,
        Alpha,
        Open,
    ),
    ("InformerResourceVersion", On, Ga, Open),
    ("InterPodAffinityHostnameFastPath", Off, Alpha, Open),
    ("JobManagedBy", On, Ga, Locked),
    ("KMSv1", Off, Deprecated, Open),
    ("KubeProxyIPVS", On, Deprecated, Open),
    ("KubeProxyNFTablesLocalhostNodePorts", Off, Alpha, Open),
    ("KubeletAllocatedPodsEndpoint", Off, Alpha, Open),
    ("KubeletCgroupDriverFromCRI", On, Ga, Locked),
    ("KubeletCrashLoopBackOffMax", On, Beta, Open),
    ("KubeletEnsureSecretPulledImages", On, Beta, Open),
    ("KubeletFineGrainedAuthz", On, Ga, Locked),
    ("KubeletInUserNamespace", On, Beta, Open),
    ("KubeletPSI", On, Ga, Locked),
    ("KubeletPodResourcesDynamicResources", On, Ga, Locked),
    ("KubeletPodResourcesGet", On, Ga, Locked),
    ("KubeletPodResourcesListUseActivePods", On, Deprecated, Open),
    ("KubeletRegistrationGetOnExistsOnly", Off, Deprecated, Open),
    ("KubeletSeparateDiskGC", On, Beta, Open),
    (
        "KubeletServiceAccountTokenForCredentialProviders",
        On,
        Beta,
        Open,
    ),
    ("KubeletTracing", On, Ga, Locked),
    ("ListFromCacheSnapshot", On, Beta, Open),
    (
        "LocalStorageCapacityIsolationFSQuotaMonitoring",
        Off,
        Beta,
        Open,
    ),
    ("LoggingAlphaOptions", Off, Alpha, Open),
    ("LoggingBetaOptions", On, Beta, Open),
    ("ManifestBasedAdmissionControlConfig", On, Beta, Open),
    ("MatchLabelKeysInPodAffinity", On, Ga, Locked),
    ("MatchLabelKeysInPodTopologySpread", On, Beta, Open),
    (
        "MatchLabelKeysInPodTopologySpreadSelectorMerge",
        On,
        Beta,
        Open,
    ),
    ("MaxUnavailableStatefulSet", On, Beta, Open),
    ("MemoryQoS", On, Beta, Open),
    ("MultiCIDRServiceAllocator", On, Ga, Locked),
    ("MutableCSINodeAllocatableCount", On, Ga, Locked),
    ("MutablePVNodeAffinity", Off, Alpha, Open),
    ("MutablePodResourcesForSuspendedJobs", On, Beta, Open),
    (
        "MutableSchedulingDirectivesForSuspendedJobs",
        On,
        Beta,
        Open,
    ),
    ("MutatingAdmissionPolicy", On, Ga, Open),
    ("NFTablesNetlink", On, Beta, Open),
    ("NFTablesProxyMode", On, Ga, Locked),
    ("NodeControllerLeaseCircuitBreaker", On, Beta, Open),
    ("NodeDeclaredFeatures", On, Ga, Locked),
    ("NodeInclusionPolicyInPodTopologySpread", On, Ga, Locked),
    ("NodeLifecycleConditions", Off, Alpha, Open),
    ("NodeLogQuery", On, Ga, Locked),
    ("NodeSwap", On, Ga, Locked),
    ("NominatedNodeNameForExpectation", On, Beta, Open),
    ("OpenAPIEnums", On, Beta, Open),
    ("OpportunisticBatching", On, Beta, Open),
    ("PLEGOnDemandRelist", On, Ga, Locked),
    ("PersistentVolumeClaimUnusedSinceTime", On, Beta, Open),
    ("PodAndContainerStatsFromCRI", Off, Beta, Open),
    ("PodCertificateRequest", On, Ga, Open),
    ("PodDeletionCost", On, Beta, Open),
    ("PodGroupPreemptionPolicy", Off, Alpha, Open),
    ("PodLevelResourceManagers", Off, Beta, Open),
    ("PodLevelResources", On, Beta, Open),
    ("PodLevelResourcesFixDefaulting", On, Beta, Open),
    ("PodLevelResourcesFixKubeletQOSClass", On, Beta, Open),
    ("PodLogsQuerySplitStreams", Off, Alpha, Open),
    ("PodObservedGenerationTracking", On, Ga, Locked),
    ("PodReadyToStartContainersCondition", On, Ga, Locked),
    ("PodSchedulingReadiness", On, Ga, Locked),
    ("PodTopologyLabelsAdmission", On, Beta, Open),
    ("PodsAPI", On, Beta, Open),
    ("PortForwardWebsockets", On, Beta, Open),
    ("PreferSameTrafficDistribution", On, Ga, Locked),
    ("ProcMountType", On, Ga, Locked),
    ("QOSReserved", Off, Alpha, Open),
    ("RecoverVolumeExpansionFailure", On, Ga, Locked),
    ("RecursiveReadOnlyMounts", On, Ga, Locked),
    ("ReduceDefaultCrashLoopBackOffDecay", Off, Alpha, Open),
    ("RelaxedEnvironmentVariableValidation", On, Ga, Locked),
    ("RelaxedServiceNameValidation", On, Ga, Locked),
    ("ReloadKubeletClientCAFile", On, Beta, Open),
    ("ReloadKubeletServerCertificateFile", On, Beta, Open),
    ("RemoteRequestHeaderUID", On, Beta, Open),
    ("ResourceHealthStatus", On, Beta, Open),
    ("ResourceHealthStatusMessage", On, Beta, Open),
    ("RestartAllContainersOnContainerExits", On, Beta, Open),
    ("RotateKubeletServerCertificate", On, Beta, Open),
    ("RuntimeClassInImageCriApi", Off, Alpha, Open),
    ("SELinuxChangePolicy", On, Ga, Locked),
    ("SELinuxMount", On, Ga, Open),
    ("SELinuxMountReadWriteOncePod", On, Ga, Locked),
    ("SchedulerAsyncAPICalls", Off, Beta, Open),
    ("SchedulerAsyncPreemption", On, Beta, Open),
    ("SchedulerPopFromBackoffQ", On, Beta, Open),
    ("SchedulerPreQueueingHints", Off, Alpha, Open),
    ("SeparateCacheWatchRPC", Off, Deprecated, Locked),
    ("SeparateTaintEvictionController", On, Ga, Locked),
    ("ServiceAccountNodeAudienceRestriction", On, Beta, Open),
    ("ServiceAccountTokenJTI", On, Ga, Locked),
    ("ServiceAccountTokenNodeBinding", On, Ga, Locked),
    ("ServiceAccountTokenNodeBindingValidation", On, Ga, Locked),
    ("ServiceAccountTokenPodNodeInfo", On, Ga, Locked),
    ("ServiceCIDRStatusFieldWiping", On, Deprecated, Open),
    ("ShardedListAndWatch", Off, Alpha, Open),
    ("SizeBasedListCostEstimate", On, Beta, Open),
    ("StaleControllerConsistencyDaemonSet", On, Beta, Open),
    ("StaleControllerConsistencyHPA", On, Beta, Open),
    ("StaleControllerConsistencyJob", On, Beta, Open),
    ("StaleControllerConsistencyReplicaSet", On, Beta, Open),
    ("StaleControllerConsistencyStatefulSet", On, Beta, Open),
    ("StatefulSetRecreateStrategy", Off, Alpha, Open),
    ("StatefulSetSemanticRevisionComparison", On, Beta, Open),
    ("StorageCapacityScoring", On, Beta, Open),
    ("StorageNamespaceIndex", On, Deprecated, Open),
    ("StorageVersionAPI", Off, Alpha, Open),
    ("StorageVersionHash", On, Beta, Open),
    ("StorageVersionMigrator", On, Ga, Open),
    ("StrictIPCIDRValidation", On, Beta, Open),
    (
        "StructuredAuthenticationConfigurationEgressSelector",
        On,
        Beta,
        Open,
    ),
    (
        "StructuredAuthenticationConfigurationJWKSMetrics",
        On,
        Beta,
        Open,
    ),
    ("SupplementalGroupsPolicy", On, Ga, Locked),
    ("SystemdWatchdog", On, Ga, Locked),
    ("TaintTolerationComparisonOperators", Off, Alpha, Open),
    ("TokenRequestServiceAccountUIDValidation", On, Beta, Open),
    ("TopologyAwareWorkloadScheduling", Off, Alpha, Open),
    ("TopologyManagerPolicyAlphaOptions", Off, Alpha, Open),
    ("TopologyManagerPolicyBetaOptions", On, Beta, Open),
    ("TopologyManagerPolicyOptions", On, Ga, Locked),
    ("TranslateStreamCloseWebsocketRequests", On, Beta, Open),
    ("UnauthenticatedHTTP2DOSMitigation", On, Beta, Open),
    ("UnknownVersionInteroperabilityProxy", On, Beta, Open),
    ("UnlockWhileProcessingFIFO", On, Beta, Open),
    ("UserNamespacesHostNetworkSupport", Off, Alpha, Open),
    ("UserNamespacesSupport", On, Ga, Locked),
    ("VolumeAttributesClass", On, Ga, Locked),
    ("VolumeBindMountOptions", Off, Alpha, Open),
    ("VolumeLimitScaling", On, Beta, Open),
    ("WatchCacheInitializationPostStartHook", On, Ga, Locked),
    ("WatchList", On, Beta, Open),
    ("WatchListClient", On, Beta, Open),
    ("WatchListCompression", On, Beta, Open),
    ("WebhookRoundTripLoadBalancing", On, Beta, Open),
    ("WinDSR", On, Ga, Locked),
    ("WinOverlay", On, Ga, Locked),
    ("WindowsCPUAndMemoryAffinity", Off, Alpha, Open),
    ("WindowsGracefulNodeShutdown", On, Beta, Open),
    ("WindowsHostNetwork", Off, Deprecated, Open),
    ("WorkloadWithJob", Off, Alpha, Open),
];

/// The gates whose setting changes what sergeant does, each with what it switches; a setting
/// of any other gate against its default is accepted with a warning.
pub const SWITCHED: &[(&str, &str)] = &[
    (
        "ContainerRestartRules",
        "off: a container's own restartPolicy and restartPolicyRules are not read",
    ),
    (
        "InPlacePodLevelResourcesVerticalScaling",
        "off: a resize of a pod's pod-level spec.resources is Infeasible (PodResizePending); \
         container-level resizes as before; no pod-level resources in the status; the feature \
         is not declared",
    ),
    (
        "KubeletCrashLoopBackOffMax",
        "off: crashLoopBackOff.maxContainerRestartPeriod may not be set, the back-off cap is 5m",
    ),
    (
        "PodLevelResources",
        "off: a pod's pod-level spec.resources is not read: its QoS class, pod cgroup, \
         admission and downward API values come from its containers",
    ),
    (
        "RestartAllContainersOnContainerExits",
        "off: a RestartAllContainers rule falls back to the container's policy, no reset, \
         not declared",
    ),
];

/// Whether gate `name` is on: its setting in `gates`, else the release's default (an unknown
/// name is off).
#[must_use]
pub fn enabled(gates: &BTreeMap<String, bool>, name: &str) -> bool {
    gates.get(name).copied().unwrap_or_else(|| {
        GATES
            .binary_search_by(|(known, ..)| known.cmp(&name))
            .is_ok_and(|index| GATES[index].1 == On)
    })
}

impl KubeletConfiguration {
    /// Whether feature gate `name` is on: as `featureGates` sets it, else the pinned release's
    /// default (defined here, beside the gate table, so the configuration's own module does not
    /// depend on it).
    #[must_use]
    pub fn feature_enabled(&self, name: &str) -> bool {
        enabled(&self.feature_gates, name)
    }
}

/// Checks `gates` against the release's registry.
///
/// # Errors
/// The first gate upstream would refuse: an unknown name, or a locked gate set against its
/// lock.
pub(crate) fn check(gates: &BTreeMap<String, bool>) -> Result<Vec<Notice>, Violation> {
    let mut notices = Vec::new();
    for (name, &wanted) in gates {
        let path = format!("featureGates.{name}");
        let Ok(index) = GATES.binary_search_by(|(known, ..)| known.cmp(&name.as_str())) else {
            return Err(Violation::at(
                &path,
                format!(
                    "unrecognized feature gate {name:?}: not a gate of Kubernetes {GATES_RELEASE}"
                ),
            ));
        };
        let (_, default, stage, lock) = GATES[index];
        let default = default == On;
        if wanted == default {
            continue;
        }
        if lock == Locked {
            return Err(Violation::at(
                &path,
                format!(
                    "cannot set feature gate {name} to {wanted}: it is locked to {default} in \
                     Kubernetes {GATES_RELEASE} ({})",
                    stage_name(stage)
                ),
            ));
        }
        if SWITCHED.iter().any(|(switched, _)| switched == name) {
            continue;
        }
        // A gate at its default is what sergeant does; any other setting of a gate sergeant
        // does not switch is accepted as upstream accepts it, and said to have no effect.
        notices.push(Notice::new(
            &path,
            format!(
                "sergeant does not switch its behaviour by the {} gate {name}: it runs as \
                 with the default ({default})",
                stage_name(stage)
            ),
        ));
    }
    Ok(notices)
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Alpha => "alpha",
        Beta => "beta",
        Ga => "GA",
        Deprecated => "deprecated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates(pairs: &[(&str, bool)]) -> BTreeMap<String, bool> {
        pairs.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
    }

    #[test]
    fn the_table_is_sorted_so_lookups_find_every_gate() {
        assert!(GATES.windows(2).all(|pair| pair[0].0 < pair[1].0));
        for (name, ..) in GATES {
            assert!(
                check(&gates(&[(name, true)])).is_ok() || check(&gates(&[(name, false)])).is_ok()
            );
        }
    }

    #[test]
    fn an_unknown_gate_is_refused_with_its_name() {
        let error = check(&gates(&[("NoSuchGate", true)])).unwrap_err();
        assert_eq!(error.field(), "featureGates.NoSuchGate");
        assert!(
            error.reason.contains("unrecognized feature gate"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn a_locked_gate_set_against_its_lock_is_refused() {
        let error = check(&gates(&[("InPlacePodVerticalScaling", false)])).unwrap_err();
        assert!(error.reason.contains("locked to true"), "{}", error.reason);
    }

    #[test]
    fn a_gate_is_on_as_set_else_as_its_default() {
        let set = gates(&[("ContainerRestartRules", false), ("EventedPLEG", true)]);
        assert!(!enabled(&set, "ContainerRestartRules"));
        assert!(enabled(&set, "EventedPLEG"));
        assert!(enabled(&set, "KubeletCrashLoopBackOffMax"), "default on");
        assert!(!enabled(&set, "NoSuchGate"));
    }

    #[test]
    fn a_switched_gate_set_against_its_default_is_quiet() {
        for (name, _) in SWITCHED {
            let index = GATES
                .binary_search_by(|(known, ..)| known.cmp(name))
                .expect("known");
            let off_default = GATES[index].1 != On;
            assert_eq!(
                check(&gates(&[(name, off_default)])).unwrap(),
                Vec::new(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_default_setting_is_quiet_and_another_is_warned() {
        assert_eq!(
            check(&gates(&[("PodLevelResources", true)])).unwrap(),
            Vec::new()
        );
        let notices = check(&gates(&[("InPlacePodVerticalScalingExclusiveCPUs", true)])).unwrap();
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].field,
            "featureGates.InPlacePodVerticalScalingExclusiveCPUs"
        );
    }
}
