//! The Node object and its status, built from the machine facts, the configuration and what
//! the runtime last said; and whether a status differs from the one the API server holds in
//! anything but heartbeats. Pure.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    ContainerImage, DaemonEndpoint, Node, NodeAddress, NodeDaemonEndpoints, NodeFeatures, NodeSpec,
    NodeStatus, NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use sergeant_config::KubeletConfiguration;

use super::conditions;
use super::facts::{MachineFacts, RuntimeHealth};
use crate::allocatable::NodeResources;
use crate::cni::NetworkReadiness;
use crate::eviction::signals::Pressure;
use crate::KUBERNETES_VERSION;

/// Tells the attach/detach controller it attaches volumes for this node, as upstream sets it.
const CONTROLLER_MANAGED_ATTACH: &str = "volumes.kubernetes.io/controller-managed-attach-detach";

/// What the runtime said at the last look (its health, its version and its images), and the
/// pressure conditions the eviction manager reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeView {
    /// The `RuntimeReady` / `NetworkReady` health the runtime adapter polls.
    pub health: RuntimeHealth,
    /// The CNI adapter's verdict on the runtime's network configuration; `None` when it made
    /// no check.
    pub cni: Option<NetworkReadiness>,
    /// `<runtime name>://<version>`, empty until the runtime answered once.
    pub version: String,
    /// The images, or `None` when they could not be listed (the reported list is kept).
    pub images: Option<Vec<ContainerImage>>,
    /// The pressure conditions that are `True`.
    pub pressure: BTreeSet<Pressure>,
}

/// The Go name of this machine's architecture (`kubernetes.io/arch`, `nodeInfo.architecture`).
#[must_use]
pub fn architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        "x86" => "386",
        other => other,
    }
}

/// The labels sergeant owns on its Node object.
#[must_use]
pub fn labels(facts: &MachineFacts) -> BTreeMap<String, String> {
    let mut labels = facts.os_labels.clone();
    labels.extend([
        ("kubernetes.io/arch".to_owned(), architecture().to_owned()),
        ("kubernetes.io/hostname".to_owned(), facts.node_name.clone()),
        ("kubernetes.io/os".to_owned(), facts.os.as_str().to_owned()),
    ]);
    labels
}

/// The Node object registered when none exists: its labels, `providerID` (as upstream's
/// initial node) and full status.
#[must_use]
pub fn node(
    facts: &MachineFacts,
    config: &KubeletConfiguration,
    runtime: &RuntimeView,
    now: &Time,
) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(facts.node_name.clone()),
            labels: Some(labels(facts)),
            annotations: Some(BTreeMap::from([(
                CONTROLLER_MANAGED_ATTACH.to_owned(),
                "true".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        spec: config.provider_id.as_ref().map(|id| NodeSpec {
            provider_id: Some(id.clone()),
            ..NodeSpec::default()
        }),
        status: Some(status(facts, config, runtime, None, now)),
    }
}

/// The features of upstream's NodeDeclaredFeatures framework that sergeant implements, by
/// their upstream names, sorted: the API server refuses a pod update that needs a feature
/// its node does not declare (a pod-level resize, the resize of a running init container), and
/// the scheduler keeps a pod with a `RestartAllContainers` rule off a node that does not
/// declare `RestartAllContainersOnContainerExits`. Each is declared only while its feature gate
/// (of the same name) is on, as upstream.
pub const DECLARED_FEATURES: [&str; 3] = [
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    "RestartAllContainersOnContainerExits",
];

/// The status to report at `now`; `previous` is what the API server holds, whose condition
/// transition times (and images, when the runtime could not list them) carry over.
#[must_use]
pub fn status(
    facts: &MachineFacts,
    config: &KubeletConfiguration,
    runtime: &RuntimeView,
    previous: Option<&NodeStatus>,
    now: &Time,
) -> NodeStatus {
    let previous_conditions = previous
        .and_then(|p| p.conditions.as_deref())
        .unwrap_or_default();
    let mut addresses = Vec::new();
    if let Some(ip) = facts.internal_ip {
        addresses.push(address("InternalIP", ip.to_string()));
    }
    addresses.push(address("Hostname", facts.node_name.clone()));
    let images = runtime
        .images
        .clone()
        .or_else(|| previous.and_then(|p| p.images.clone()));
    NodeStatus {
        capacity: Some(quantities(facts.capacity)),
        allocatable: Some(quantities(facts.capacity.allocatable(config))),
        conditions: Some(conditions::conditions(
            previous_conditions,
            &runtime.health,
            runtime.cni.as_ref(),
            &runtime.pressure,
            now,
        )),
        addresses: Some(addresses),
        daemon_endpoints: Some(NodeDaemonEndpoints {
            kubelet_endpoint: Some(DaemonEndpoint {
                port: i32::from(config.port),
            }),
        }),
        node_info: Some(NodeSystemInfo {
            machine_id: facts.machine_id.clone(),
            system_uuid: facts.system_uuid.clone(),
            boot_id: facts.boot_id.clone(),
            kernel_version: facts.kernel_version.clone(),
            os_image: facts.os_image.clone(),
            container_runtime_version: runtime.version.clone(),
            kubelet_version: KUBERNETES_VERSION.to_owned(),
            operating_system: facts.os.as_str().to_owned(),
            architecture: architecture().to_owned(),
            ..NodeSystemInfo::default()
        }),
        images,
        features: runtime
            .health
            .supplemental_groups_policy
            .map(|supported| NodeFeatures {
                supplemental_groups_policy: Some(supported),
            }),
        declared_features: Some(
            DECLARED_FEATURES
                .iter()
                .filter(|feature| config.feature_enabled(feature))
                .map(|feature| (*feature).to_owned())
                .collect(),
        ),
        ..NodeStatus::default()
    }
}

/// Whether `new` says anything `old` (the API server's) does not, heartbeats aside: the
/// node status is patched when this is true or the report period has passed.
#[must_use]
pub fn changed(old: &NodeStatus, new: &NodeStatus) -> bool {
    let same_quantities = |old: &Option<BTreeMap<String, Quantity>>,
                           new: &Option<BTreeMap<String, Quantity>>| {
        new.iter().flatten().all(|(name, value)| {
            old.as_ref()
                .and_then(|old| old.get(name))
                .is_some_and(|was| same_quantity(was, value))
        })
    };
    let same_conditions = new.conditions.iter().flatten().all(|condition| {
        old.conditions.iter().flatten().any(|was| {
            was.type_ == condition.type_
                && was.status == condition.status
                && was.reason == condition.reason
                && was.message == condition.message
                && was.last_transition_time == condition.last_transition_time
        })
    });
    let same_addresses = new
        .addresses
        .iter()
        .flatten()
        .all(|a| old.addresses.iter().flatten().any(|was| was == a));
    !(same_quantities(&old.capacity, &new.capacity)
        && same_quantities(&old.allocatable, &new.allocatable)
        && same_conditions
        && same_addresses
        && old.node_info == new.node_info
        && old.daemon_endpoints == new.daemon_endpoints
        && old.images == new.images
        && old.features == new.features
        && old.declared_features == new.declared_features)
}

/// Two quantities are the same amount however written (the API server rewrites them in
/// canonical form: `8029148Ki` for `8221847552`).
fn same_quantity(a: &Quantity, b: &Quantity) -> bool {
    let value = |q: &Quantity| {
        q.0.parse::<sergeant_config::Quantity>()
            .ok()
            .map(|q| q.milli_value())
    };
    match (value(a), value(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

fn address(kind: &str, address: String) -> NodeAddress {
    NodeAddress {
        type_: kind.to_owned(),
        address,
    }
}

/// Resources as `status.capacity` / `status.allocatable` write them.
fn quantities(resources: NodeResources) -> BTreeMap<String, Quantity> {
    let cpu = if resources.cpu_millis % 1000 == 0 {
        (resources.cpu_millis / 1000).to_string()
    } else {
        format!("{}m", resources.cpu_millis)
    };
    BTreeMap::from([
        ("cpu".to_owned(), Quantity(cpu)),
        (
            "memory".to_owned(),
            Quantity(resources.memory_bytes.to_string()),
        ),
        (
            "ephemeral-storage".to_owned(),
            Quantity(resources.ephemeral_storage_bytes.to_string()),
        ),
        ("pods".to_owned(), Quantity(resources.pods.to_string())),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::NodeOs;
    use k8s_openapi::jiff::Timestamp;

    const GIB: i64 = 1 << 30;

    fn facts() -> MachineFacts {
        MachineFacts {
            node_name: "node-a".to_owned(),
            internal_ip: Some("10.0.0.5".parse().unwrap()),
            os: NodeOs::Linux,
            os_labels: BTreeMap::new(),
            machine_id: "m1".to_owned(),
            system_uuid: "u1".to_owned(),
            boot_id: "b1".to_owned(),
            kernel_version: "6.1.0".to_owned(),
            os_image: "Debian GNU/Linux 12 (bookworm)".to_owned(),
            capacity: NodeResources {
                cpu_millis: 2000,
                memory_bytes: 8 * GIB,
                ephemeral_storage_bytes: 100 * GIB,
                pods: 110,
            },
        }
    }

    fn runtime() -> RuntimeView {
        RuntimeView {
            health: RuntimeHealth {
                adapter: "cri".to_owned(),
                reachable: true,
                runtime_ready: true,
                network_ready: true,
                ..RuntimeHealth::default()
            },
            cni: None,
            version: "containerd://1.6.20".to_owned(),
            images: Some(Vec::new()),
            pressure: BTreeSet::new(),
        }
    }

    fn at(second: i64) -> Time {
        Time(Timestamp::from_second(second).unwrap())
    }

    fn get<'a>(map: &'a Option<BTreeMap<String, Quantity>>, key: &str) -> &'a str {
        &map.as_ref().unwrap()[key].0
    }

    #[test]
    fn the_runtimes_features_are_reported_only_when_it_reports_them() {
        let config = KubeletConfiguration::default();
        let mut view = runtime();
        let none = status(&facts(), &config, &view, None, &at(0));
        assert_eq!(none.features, None, "a runtime without features: none");
        view.health.supplemental_groups_policy = Some(true);
        let strict = status(&facts(), &config, &view, None, &at(0));
        assert_eq!(
            strict.features.and_then(|f| f.supplemental_groups_policy),
            Some(true)
        );
        assert!(
            changed(&none, &status(&facts(), &config, &view, None, &at(0))),
            "a new feature is a change to report"
        );
    }

    #[test]
    fn the_registered_node_carries_the_configured_provider_id() {
        let mut config = KubeletConfiguration::default();
        assert_eq!(node(&facts(), &config, &runtime(), &at(0)).spec, None);
        config.provider_id = Some("kind://docker/kind/node-a".to_owned());
        let spec = node(&facts(), &config, &runtime(), &at(0)).spec.unwrap();
        assert_eq!(
            spec.provider_id.as_deref(),
            Some("kind://docker/kind/node-a")
        );
    }

    #[test]
    fn a_windows_node_says_so_and_carries_its_build_label() {
        let windows = MachineFacts {
            os: NodeOs::Windows,
            os_labels: BTreeMap::from([(
                "node.kubernetes.io/windows-build".to_owned(),
                "10.0.20348".to_owned(),
            )]),
            ..facts()
        };
        let node = node(
            &windows,
            &KubeletConfiguration::default(),
            &runtime(),
            &at(0),
        );
        let labels = node.metadata.labels.unwrap();
        assert_eq!(labels["kubernetes.io/os"], "windows");
        assert_eq!(labels["node.kubernetes.io/windows-build"], "10.0.20348");
        assert_eq!(labels["kubernetes.io/hostname"], "node-a");
        let info = node.status.unwrap().node_info.unwrap();
        assert_eq!(info.operating_system, "windows");
        assert!(
            !labels_of_linux().contains_key("node.kubernetes.io/windows-build"),
            "a Linux node has no Windows build label"
        );
    }

    fn labels_of_linux() -> BTreeMap<String, String> {
        labels(&facts())
    }

    #[test]
    fn the_registered_node_carries_labels_capacity_allocatable_and_info() {
        let config = KubeletConfiguration::default();
        let node = node(&facts(), &config, &runtime(), &at(0));
        assert_eq!(node.metadata.name.as_deref(), Some("node-a"));
        let labels = node.metadata.labels.unwrap();
        assert_eq!(labels["kubernetes.io/hostname"], "node-a");
        assert_eq!(labels["kubernetes.io/os"], "linux");
        assert_eq!(labels["kubernetes.io/arch"], architecture());
        let status = node.status.unwrap();
        assert_eq!(get(&status.capacity, "cpu"), "2");
        assert_eq!(get(&status.capacity, "memory"), (8 * GIB).to_string());
        assert_eq!(get(&status.capacity, "pods"), "110");
        assert_eq!(
            get(&status.allocatable, "memory"),
            (8 * GIB - 100 * (1 << 20)).to_string()
        );
        assert_eq!(
            get(&status.allocatable, "ephemeral-storage"),
            (90 * GIB).to_string()
        );
        let addresses = status.addresses.unwrap();
        assert_eq!(addresses[0], address("InternalIP", "10.0.0.5".to_owned()));
        assert_eq!(addresses[1], address("Hostname", "node-a".to_owned()));
        assert_eq!(
            status.declared_features.as_deref(),
            Some(
                &[
                    "InPlacePodLevelResourcesVerticalScaling".to_owned(),
                    "InPlacePodVerticalScalingInitContainers".to_owned(),
                    "RestartAllContainersOnContainerExits".to_owned()
                ][..]
            )
        );
        let info = status.node_info.unwrap();
        assert_eq!(info.container_runtime_version, "containerd://1.6.20");
        assert_eq!(info.kubelet_version, KUBERNETES_VERSION);
        assert_eq!(
            (info.machine_id.as_str(), info.boot_id.as_str()),
            ("m1", "b1")
        );
        assert_eq!(
            status
                .daemon_endpoints
                .unwrap()
                .kubelet_endpoint
                .unwrap()
                .port,
            10250
        );
    }

    #[test]
    fn only_heartbeats_do_not_count_as_a_change() {
        let config = KubeletConfiguration::default();
        let first = status(&facts(), &config, &runtime(), None, &at(0));
        let later = status(&facts(), &config, &runtime(), Some(&first), &at(10));
        assert!(!changed(&first, &later));
        let mut canonical = first.clone();
        canonical
            .capacity
            .as_mut()
            .unwrap()
            .insert("memory".to_owned(), Quantity("8Gi".to_owned()));
        assert!(!changed(&canonical, &later), "8Gi is 8589934592");
        let down = RuntimeView {
            health: RuntimeHealth::default(),
            ..runtime()
        };
        let not_ready = status(&facts(), &config, &down, Some(&first), &at(20));
        assert!(changed(&first, &not_ready));
        let mut more_pods = config.clone();
        more_pods.port = 10260;
        assert!(changed(
            &first,
            &status(&facts(), &more_pods, &runtime(), Some(&first), &at(20))
        ));
    }

    #[test]
    fn images_carry_over_when_the_runtime_cannot_list_them() {
        let config = KubeletConfiguration::default();
        let image = ContainerImage {
            names: Some(vec!["busybox:1".to_owned()]),
            size_bytes: Some(1),
        };
        let listed = RuntimeView {
            images: Some(vec![image.clone()]),
            ..runtime()
        };
        let first = status(&facts(), &config, &listed, None, &at(0));
        let unlisted = RuntimeView {
            images: None,
            ..runtime()
        };
        let later = status(&facts(), &config, &unlisted, Some(&first), &at(10));
        assert_eq!(later.images, Some(vec![image]));
    }
}
