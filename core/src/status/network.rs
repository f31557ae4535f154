//! The pod's and the node's addresses in the status, and whether the sandbox network is up.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{HostIP, PodIP, PodSpec, PodStatus};

/// The node's addresses as status entries, primary first, without blanks or repeats.
pub(super) fn host_ips(ips: &[String]) -> Vec<HostIP> {
    distinct(ips.iter().map(String::as_str))
        .into_iter()
        .map(|ip| HostIP { ip })
        .collect()
}

/// Whether the sandbox is ready and its network configured: an IP, or the host's network.
pub(super) fn sandbox_ready(spec: &PodSpec, sandbox: Option<&cri::PodSandboxStatus>) -> bool {
    sandbox.is_some_and(|s| {
        s.state == cri::PodSandboxState::SandboxReady as i32
            && (host_network(spec) || !sandbox_ips(s).is_empty())
    })
}

/// `podIP` and `podIPs`: the node's addresses for a host-network pod, else the sandbox's
/// primary and additional IPs. When the sandbox shows none (gone, or not yet networked) the
/// previous status's addresses stay, so a pod does not lose its IP while it stops.
pub(super) fn pod_ips(
    spec: &PodSpec,
    sandbox: Option<&cri::PodSandboxStatus>,
    host: &[HostIP],
    previous: &PodStatus,
) -> (Option<String>, Option<Vec<PodIP>>) {
    let ips: Vec<String> = if host_network(spec) {
        host.iter().map(|h| h.ip.clone()).collect()
    } else {
        sandbox.map(sandbox_ips).unwrap_or_default()
    };
    if ips.is_empty() {
        return (previous.pod_ip.clone(), previous.pod_ips.clone());
    }
    let primary = ips.first().cloned();
    (
        primary,
        Some(ips.into_iter().map(|ip| PodIP { ip }).collect()),
    )
}

/// The pod's addresses as its containers are told them (env `fieldRef: status.podIP(s)`): the
/// node's address for a host-network pod, as upstream (its sandbox has none of its own), else
/// the sandbox's (none without a sandbox status).
#[must_use]
pub fn container_pod_ips(
    spec: Option<&PodSpec>,
    sandbox: Option<&cri::PodSandboxStatus>,
    node_ip: Option<std::net::IpAddr>,
) -> Vec<String> {
    if spec.is_some_and(host_network) {
        return node_ip.map(|ip| vec![ip.to_string()]).unwrap_or_default();
    }
    sandbox.map(sandbox_ips).unwrap_or_default()
}

fn host_network(spec: &PodSpec) -> bool {
    spec.host_network == Some(true)
}

/// The sandbox's addresses, primary first, without blanks or repeats (what the managed
/// `/etc/hosts` maps to the pod's name as well).
pub fn sandbox_ips(sandbox: &cri::PodSandboxStatus) -> Vec<String> {
    let Some(network) = &sandbox.network else {
        return Vec::new();
    };
    let additional = network.additional_ips.iter().map(|ip| ip.ip.as_str());
    distinct(std::iter::once(network.ip.as_str()).chain(additional))
}

/// Non-empty addresses, first occurrence only, in order.
fn distinct<'a>(ips: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    ips.filter(|ip| !ip.is_empty() && seen.insert(*ip))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{HostIP, PodIP, PodStatus};

    use crate::status::testing::{knowledge, observed, pod, sandbox};
    use crate::status::{compute, Knowledge};

    fn pod_ips(status: &PodStatus) -> Vec<&str> {
        status
            .pod_ips
            .iter()
            .flatten()
            .map(|ip| ip.ip.as_str())
            .collect()
    }

    #[test]
    fn containers_of_a_host_network_pod_are_told_the_node_address() {
        use super::container_pod_ips;
        use k8s_openapi::api::core::v1::PodSpec;
        let host = PodSpec {
            host_network: Some(true),
            ..PodSpec::default()
        };
        let node_ip = "192.168.1.10".parse().ok();
        assert_eq!(
            container_pod_ips(Some(&host), None, node_ip),
            vec!["192.168.1.10".to_owned()]
        );
        assert!(container_pod_ips(Some(&PodSpec::default()), None, node_ip).is_empty());
        assert!(container_pod_ips(Some(&host), None, None).is_empty());
    }

    fn on_node() -> Knowledge {
        Knowledge {
            host_ips: vec![
                "192.168.1.10".into(),
                "fd00::10".into(),
                "192.168.1.10".into(),
            ],
            ..knowledge()
        }
    }

    #[test]
    fn pod_ips_are_the_sandbox_primary_then_additional_ips() {
        let mut observed = observed(vec![]);
        observed.sandbox = Some(sandbox("10.0.0.7", &["fd00:1::7", ""]));
        let status = compute(&pod("Always", vec![], &["app"]), &observed, &knowledge());
        assert_eq!(status.pod_ip.as_deref(), Some("10.0.0.7"));
        assert_eq!(pod_ips(&status), ["10.0.0.7", "fd00:1::7"]);
    }

    #[test]
    fn host_ips_come_from_the_node_primary_first_without_repeats() {
        let status = compute(
            &pod("Always", vec![], &["app"]),
            &observed(vec![]),
            &on_node(),
        );
        assert_eq!(status.host_ip.as_deref(), Some("192.168.1.10"));
        let ips: Vec<&str> = status
            .host_ips
            .iter()
            .flatten()
            .map(|h| h.ip.as_str())
            .collect();
        assert_eq!(ips, ["192.168.1.10", "fd00::10"]);
    }

    #[test]
    fn no_node_address_leaves_host_ips_unset() {
        let status = compute(
            &pod("Always", vec![], &["app"]),
            &observed(vec![]),
            &knowledge(),
        );
        assert_eq!(
            (status.host_ip, status.host_ips),
            (None, None::<Vec<HostIP>>)
        );
    }

    #[test]
    fn a_host_network_pod_has_the_node_addresses() {
        let mut pod = pod("Always", vec![], &["app"]);
        if let Some(spec) = pod.spec.as_mut() {
            spec.host_network = Some(true);
        }
        let status = compute(&pod, &observed(vec![]), &on_node());
        assert_eq!(pod_ips(&status), ["192.168.1.10", "fd00::10"]);
        assert_eq!(status.pod_ip.as_deref(), Some("192.168.1.10"));
    }

    #[test]
    fn addresses_stay_when_the_sandbox_shows_none() {
        let mut pod = pod("Always", vec![], &["app"]);
        pod.status = Some(PodStatus {
            pod_ip: Some("10.0.0.9".into()),
            pod_ips: Some(vec![PodIP {
                ip: "10.0.0.9".into(),
            }]),
            ..PodStatus::default()
        });
        let mut gone = observed(vec![]);
        gone.sandbox = None;
        let status = compute(&pod, &gone, &knowledge());
        assert_eq!(status.pod_ip.as_deref(), Some("10.0.0.9"));
        assert_eq!(pod_ips(&status), ["10.0.0.9"]);
    }
}
