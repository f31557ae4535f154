//! Admission: whether a pod fits on the node next to the pods already admitted — pod count
//! (`maxPods`), host ports (per protocol and host IP), and its requests of every resource
//! (cpu, memory, ephemeral storage, and extended resources, of which this node has none)
//! against what the node has, counted as upstream counts them (sidecars add to the app
//! containers, init containers take their peak, pod overhead on top) and refused in
//! upstream's words (cpu in millicores, written without a unit). Entry point: [`admit`],
//! which the pod manager asks before it starts a pod and for each resize
//! (`crate::allocation`); the pods it passes as admitted are the ones not finished (a
//! Succeeded or Failed pod holds nothing, as upstream), at their allocated resources.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use crate::context::{NodeContext, NodeOs};
use crate::spec::profiles::apparmor_requested;
use crate::spec::{milli, pod_requests, units};
use crate::sysctls::Allowlist;

/// Why a pod was not admitted; it becomes the pod's Failed status, as upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The upstream reason (`OutOfpods`, `OutOfcpu`, `OutOfmemory`,
    /// `OutOfephemeral-storage`, `OutOf<extended resource>`, `HostPortConflict`).
    pub reason: String,
    /// The message.
    pub message: String,
}

/// What the node can give pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// `maxPods`.
    pub pods: usize,
    /// Allocatable CPU in millicores.
    pub cpu_millis: i64,
    /// Allocatable memory in bytes.
    pub memory_bytes: i64,
    /// Allocatable ephemeral storage in bytes; `None` when the node could not measure its
    /// filesystem, and then requests of it are not checked.
    pub ephemeral_storage_bytes: Option<i64>,
}

/// The resources a pod's requests are checked for by name; any other requested resource is an
/// extended one (or huge pages), of which the node advertises none.
const CPU: &str = "cpu";
const MEMORY: &str = "memory";
const EPHEMERAL_STORAGE: &str = "ephemeral-storage";

/// Decides whether `pod` may join `admitted`.
///
/// # Errors
/// The [`Rejection`] when it may not.
pub fn admit(pod: &Pod, admitted: &[&Pod], capacity: Capacity) -> Result<(), Rejection> {
    if admitted.len() >= capacity.pods {
        return Err(reject(
            "OutOfpods",
            format!(
                "Node didn't have enough resource: pods, requested: 1, used: {}, capacity: {}",
                admitted.len(),
                capacity.pods
            ),
        ));
    }
    let used: Vec<HostPort> = admitted.iter().flat_map(|p| host_ports(p)).collect();
    if let Some(port) = host_ports(pod)
        .into_iter()
        .find(|wanted| used.iter().any(|u| u.conflicts(wanted)))
    {
        return Err(reject(
            "HostPortConflict",
            format!(
                "host port {}/{} on {} is already used by another pod",
                port.port,
                port.protocol,
                port.ip.as_deref().unwrap_or("0.0.0.0")
            ),
        ));
    }
    let wanted = requests(pod);
    let used = admitted
        .iter()
        .map(|p| requests(p))
        .fold(Requests::default(), |mut sum, r| {
            for (name, amount) in r.0 {
                let total = sum.0.entry(name).or_default();
                *total = total.saturating_add(amount);
            }
            sum
        });
    for (name, amount) in wanted.0.iter().filter(|(_, a)| **a > 0) {
        let capacity = match name.as_str() {
            CPU => Some(capacity.cpu_millis),
            MEMORY => Some(capacity.memory_bytes),
            EPHEMERAL_STORAGE => match capacity.ephemeral_storage_bytes {
                Some(bytes) => Some(bytes),
                None => continue,
            },
            _ => None,
        }
        .unwrap_or(0);
        let in_use = used.0.get(name).copied().unwrap_or(0);
        if in_use.saturating_add(*amount) > capacity {
            return Err(reject(
                &format!("OutOf{name}"),
                format!(
                    "Node didn't have enough resource: {name}, requested: {amount}, used: {in_use}, capacity: {capacity}"
                ),
            ));
        }
    }
    Ok(())
}

/// Upstream's checks of what the node is rather than what it has left, made before the
/// resources: an AppArmor profile on a node whose kernel does not enforce AppArmor
/// (`AppArmor`), the pod's sysctls against the node's `allowlist` (`SysctlForbidden`), its
/// `kubernetes.io/os` node selector and its `spec.os.name` against the node's `os`.
///
/// # Errors
/// The [`Rejection`] of the first check that fails.
pub fn admit_to_node(
    pod: &Pod,
    node: &NodeContext,
    allowlist: &Allowlist,
) -> Result<(), Rejection> {
    if apparmor_requested(pod) && !node.apparmor_enabled {
        return Err(reject(
            "AppArmor",
            "Cannot enforce AppArmor: AppArmor is not enabled on the host".to_owned(),
        ));
    }
    allowlist
        .check_pod(pod)
        .map_err(|forbidden| reject("SysctlForbidden", forbidden.to_string()))?;
    let os_name = match node.os {
        NodeOs::Linux => "linux",
        NodeOs::Windows => "windows",
    };
    let spec = pod.spec.as_ref();
    let selected = spec
        .and_then(|s| s.node_selector.as_ref())
        .and_then(|selector| selector.get("kubernetes.io/os"));
    if selected.is_some_and(|wanted| wanted != os_name) {
        return Err(reject(
            "PodOSSelectorNodeLabelDoesNotMatch",
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
                .to_owned(),
        ));
    }
    let declared = spec.and_then(|s| s.os.as_ref()).map(|os| os.name.as_str());
    if declared.is_some_and(|wanted| wanted != os_name) {
        return Err(reject(
            "PodOSNotSupported",
            "Failed to admit pod as the OS field doesn't match node OS".to_owned(),
        ));
    }
    Ok(())
}

/// Whether `pod` asks for `supplementalGroupsPolicy: Strict`: its processes get only the
/// groups the pod names, not those the image's `/etc/group` adds.
#[must_use]
pub fn wants_strict_groups(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.security_context.as_ref())
        .and_then(|sc| sc.supplemental_groups_policy.as_deref())
        == Some(STRICT_GROUPS)
}

/// Upstream's check of a pod's `supplementalGroupsPolicy` against the runtime: a `Strict`
/// pod needs a runtime that applies the policy (`runtime_supports`, from its CRI features);
/// on any other it is refused rather than run with groups it asked not to have.
///
/// # Errors
/// `SupplementalGroupsPolicyNotSupported` with upstream's message.
pub fn admit_groups_policy(pod: &Pod, runtime_supports: bool) -> Result<(), Rejection> {
    if wants_strict_groups(pod) && !runtime_supports {
        return Err(reject(
            "SupplementalGroupsPolicyNotSupported",
            format!("SupplementalGroupsPolicy={STRICT_GROUPS} is not supported in this node"),
        ));
    }
    Ok(())
}

/// The `supplementalGroupsPolicy` that leaves out the image's groups.
const STRICT_GROUPS: &str = "Strict";

/// The reasons `kubelet_admission_rejections_total` counts by name, as upstream's kubelet does
/// (the reasons of its own admission handlers): any other counts as `OutOfExtendedResources`
/// when it is one (`OutOf<resource>`), else as `Other`, so the label stays bounded.
const COUNTED_REASONS: &[&str] = &[
    "AppArmor",
    "PodOSSelectorNodeLabelDoesNotMatch",
    "PodOSNotSupported",
    "InvalidNodeInfo",
    "InitContainerRestartPolicyForbidden",
    "SupplementalGroupsPolicyNotSupported",
    "UnexpectedAdmissionError",
    "UnknownReason",
    "UnexpectedPredicateFailureType",
    "OutOfcpu",
    "OutOfmemory",
    "OutOfephemeral-storage",
    "OutOfpods",
    "PodLevelResourcesNotSupported",
    "PodFeatureUnsupported",
    "node(s) had taints that the pod didn't tolerate",
    "Evicted",
    "SysctlForbidden",
    "TopologyAffinityError",
    "NodeShutdown",
    "VolumeAttachmentLimitExceeded",
];

impl Rejection {
    /// The `reason` label of `kubelet_admission_rejections_total` this rejection counts under,
    /// as upstream's kubelet labels it.
    #[must_use]
    pub fn metric_reason(&self) -> &str {
        if COUNTED_REASONS.contains(&self.reason.as_str()) {
            &self.reason
        } else if self.reason.starts_with("OutOf") {
            "OutOfExtendedResources"
        } else {
            "Other"
        }
    }
}

fn reject(reason: &str, message: String) -> Rejection {
    Rejection {
        reason: reason.to_owned(),
        message,
    }
}

/// A host port a container asks for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct HostPort {
    protocol: String,
    port: i32,
    /// The host IP it binds; `None` for every address.
    ip: Option<String>,
}

impl HostPort {
    /// Two host ports clash on the same protocol and port when either binds every address
    /// or both bind the same one, as upstream's scheduler and kubelet decide.
    fn conflicts(&self, other: &Self) -> bool {
        self.protocol == other.protocol
            && self.port == other.port
            && (self.ip.is_none() || other.ip.is_none() || self.ip == other.ip)
    }
}

fn host_ports(pod: &Pod) -> BTreeSet<HostPort> {
    pod.spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            let ip = p
                .host_ip
                .as_deref()
                .filter(|ip| !ip.is_empty() && *ip != "0.0.0.0" && *ip != "::");
            p.host_port.filter(|hp| *hp > 0).map(|port| HostPort {
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
                port,
                ip: ip.map(str::to_owned),
            })
        })
        .collect()
}

/// A pod's requests by resource name: cpu in millicores, everything else in whole units.
#[derive(Debug, Default)]
struct Requests(std::collections::BTreeMap<String, i64>);

/// What `pod` requests, as the scheduler counts it ([`pod_requests`]). Sums saturate: each
/// request is within a quantity's range, but a pod's total need not be.
fn requests(pod: &Pod) -> Requests {
    Requests(
        pod_requests(pod)
            .into_iter()
            .map(|(name, nanos)| {
                let amount = if name == CPU {
                    milli(nanos)
                } else {
                    units(nanos)
                };
                (name, amount)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).expect("a pod")
    }

    fn with(cpu: &str, memory: &str, host_port: Option<i32>) -> Pod {
        let mut container = serde_json::json!({"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}});
        if let Some(port) = host_port {
            container["ports"] = serde_json::json!([{"containerPort": 80, "hostPort": port}]);
        }
        pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [container]}}))
    }

    const NODE: Capacity = Capacity {
        pods: 2,
        cpu_millis: 1000,
        memory_bytes: 1 << 30,
        ephemeral_storage_bytes: Some(10 << 30),
    };

    #[test]
    fn max_pods_is_enforced() {
        let a = with("1m", "1", None);
        let err = admit(&a, &[&a, &a], NODE).unwrap_err();
        assert_eq!(err.reason, "OutOfpods");
    }

    #[test]
    fn host_port_conflicts_are_refused() {
        let a = with("1m", "1", Some(8080));
        assert_eq!(
            admit(&a, &[&a], NODE).unwrap_err().reason,
            "HostPortConflict"
        );
        assert!(admit(&with("1m", "1", Some(8081)), &[&a], NODE).is_ok());
    }

    #[test]
    fn cpu_and_memory_requests_must_fit() {
        let big = with("600m", "1Mi", None);
        assert_eq!(admit(&big, &[&big], NODE).unwrap_err().reason, "OutOfcpu");
        let fat = with("1m", "600Mi", None);
        assert_eq!(
            admit(&fat, &[&fat], NODE).unwrap_err().reason,
            "OutOfmemory"
        );
        assert!(admit(&with("300m", "100Mi", None), &[&big], NODE).is_ok());
    }

    /// Requests each within a quantity's range can sum past it: two containers of 4Ei
    /// overflowed the sum (a panic in a debug build, a wrap to a negative request that fits
    /// any node in a release build). The sums saturate, and such a pod does not fit.
    #[test]
    fn huge_requests_do_not_overflow_the_sums() {
        let container = serde_json::json!({"name": "c", "image": "i", "resources": {"requests": {"cpu": "4000000000000000", "memory": "4Ei"}}});
        let huge = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [container.clone(), container]}}),
        );
        assert_eq!(admit(&huge, &[], NODE).unwrap_err().reason, "OutOfcpu");
        let small = with("1m", "1", None);
        assert_eq!(
            admit(&small, &[&huge], NODE).unwrap_err().reason,
            "OutOfcpu"
        );
    }

    fn with_port(host_ip: Option<&str>, protocol: &str) -> Pod {
        let mut port =
            serde_json::json!({"containerPort": 80, "hostPort": 8080, "protocol": protocol});
        if let Some(ip) = host_ip {
            port["hostIP"] = ip.into();
        }
        pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [
                {"name": "c", "image": "i", "ports": [port]}
            ]}}),
        )
    }

    #[test]
    fn host_ports_clash_only_on_the_same_protocol_and_address() {
        let any = with_port(None, "TCP");
        let one = with_port(Some("127.0.0.1"), "TCP");
        let other = with_port(Some("127.0.0.2"), "TCP");
        let udp = with_port(None, "UDP");
        let clash = |pod: &Pod, admitted: &Pod| admit(pod, &[admitted], NODE).is_err();
        assert!(clash(&one, &any), "every address includes this one");
        assert!(clash(&any, &one));
        assert!(clash(&one, &one));
        assert!(!clash(&one, &other), "two addresses, one port each");
        assert!(!clash(&udp, &any), "another protocol");
        assert!(
            clash(&with_port(Some("0.0.0.0"), "TCP"), &one),
            "0.0.0.0 is every address"
        );
    }

    #[test]
    fn sidecars_add_to_the_apps_and_init_containers_take_their_peak() {
        let sidecar = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [
                {"name": "side", "image": "i", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "300m"}}},
                {"name": "once", "image": "i", "resources": {"requests": {"cpu": "200m"}}}
            ],
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "400m"}}}]
        }}));
        let r = requests(&sidecar);
        assert_eq!(r.0.get("cpu"), Some(&700), "sidecar 300m + app 400m");
        let used = with("350m", "1", None);
        assert_eq!(
            admit(&sidecar, &[&used], NODE).unwrap_err().reason,
            "OutOfcpu",
            "700m + 350m is past 1000m"
        );
    }

    #[test]
    fn storage_and_extended_resources_are_checked() {
        let storage = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"ephemeral-storage": "11Gi"}}}
            ]}}),
        );
        let err = admit(&storage, &[], NODE).unwrap_err();
        assert_eq!(err.reason, "OutOfephemeral-storage");
        assert!(
            err.message.contains("capacity: 10737418240"),
            "{}",
            err.message
        );
        let unmeasured = Capacity {
            ephemeral_storage_bytes: None,
            ..NODE
        };
        assert!(
            admit(&storage, &[], unmeasured).is_ok(),
            "not measured, not checked"
        );
        let gpu = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}
            ]}}),
        );
        let err = admit(&gpu, &[], NODE).unwrap_err();
        assert_eq!(err.reason, "OutOfexample.com/gpu");
        assert_eq!(
            err.message,
            "Node didn't have enough resource: example.com/gpu, requested: 1, used: 0, capacity: 0"
        );
    }

    /// The test node, running `os`.
    fn node_on(os: NodeOs) -> NodeContext {
        let mut node = crate::testing::node(std::path::PathBuf::from("/r"));
        node.os = os;
        node
    }

    #[test]
    fn rejections_are_counted_under_upstreams_bounded_reasons() {
        let counted = |reason: &str| reject(reason, String::new()).metric_reason().to_owned();
        assert_eq!(counted("SysctlForbidden"), "SysctlForbidden");
        assert_eq!(counted("OutOfcpu"), "OutOfcpu");
        assert_eq!(counted("OutOfexample.com/gpu"), "OutOfExtendedResources");
        assert_eq!(counted("HostPortConflict"), "Other");
    }

    #[test]
    fn a_strict_supplemental_groups_policy_needs_a_runtime_that_applies_it() {
        let with_policy = |policy: &str| {
            pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
                "securityContext": {"supplementalGroupsPolicy": policy},
                "containers": [{"name": "c", "image": "i"}]}}))
        };
        let strict = with_policy("Strict");
        let err = admit_groups_policy(&strict, false).unwrap_err();
        assert_eq!(
            (err.reason.as_str(), err.message.as_str()),
            (
                "SupplementalGroupsPolicyNotSupported",
                "SupplementalGroupsPolicy=Strict is not supported in this node"
            )
        );
        assert!(admit_groups_policy(&strict, true).is_ok());
        assert!(admit_groups_policy(&with_policy("Merge"), false).is_ok());
        assert!(admit_groups_policy(&with("1m", "1", None), false).is_ok());
    }

    #[test]
    fn an_apparmor_profile_needs_a_host_that_enforces_apparmor() {
        let allow = Allowlist::of(&sergeant_config::KubeletConfiguration::default());
        let confined = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "c", "image": "i",
                "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}]}}));
        let mut node = node_on(NodeOs::Linux);
        let err = admit_to_node(&confined, &node, &allow).unwrap_err();
        assert_eq!(err.reason, "AppArmor");
        assert_eq!(
            err.message,
            "Cannot enforce AppArmor: AppArmor is not enabled on the host"
        );
        let unconfined = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            "containers": [{"name": "c", "image": "i"}]}}));
        assert!(admit_to_node(&unconfined, &node, &allow).is_ok());
        node.apparmor_enabled = true;
        assert!(admit_to_node(&confined, &node, &allow).is_ok());
    }

    #[test]
    fn a_pod_for_another_os_or_with_a_forbidden_sysctl_is_refused_by_reason() {
        let allow = Allowlist::of(&sergeant_config::KubeletConfiguration::default());
        let (linux, windows_node) = (node_on(NodeOs::Linux), node_on(NodeOs::Windows));
        let windows = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "os": {"name": "windows"}, "containers": [{"name": "c", "image": "i"}]}}));
        assert_eq!(
            admit_to_node(&windows, &linux, &allow).unwrap_err().reason,
            "PodOSNotSupported"
        );
        assert!(admit_to_node(&windows, &windows_node, &allow).is_ok());
        let selected = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "nodeSelector": {"kubernetes.io/os": "windows"}, "containers": [{"name": "c", "image": "i"}]}}));
        assert_eq!(
            admit_to_node(&selected, &linux, &allow).unwrap_err().reason,
            "PodOSSelectorNodeLabelDoesNotMatch"
        );
        let sysctl = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "10000"}]},
            "containers": [{"name": "c", "image": "i"}]}}));
        let err = admit_to_node(&sysctl, &linux, &allow).unwrap_err();
        assert_eq!(err.reason, "SysctlForbidden");
        assert_eq!(
            err.message,
            "forbidden sysctl: \"kernel.msgmax\" not allowlisted"
        );
        assert!(admit_to_node(&with("1m", "1", None), &linux, &allow).is_ok());
    }
}
