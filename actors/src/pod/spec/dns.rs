//! The pod's resolver configuration from its `dnsPolicy` and `dnsConfig`: cluster DNS, the
//! host's resolv.conf, or only what the pod says.

use std::path::Path;

use sergeant_messages::pods::core::{Pod, PodDNSConfig};
use sergeant_messages::runtime::cri::DnsConfig;

use super::error::SpecError;
use super::identity::PodIdentity;
use super::node::NodeContext;

/// Most name servers a resolver uses; more are dropped.
const MAX_NAMESERVERS: usize = 3;
/// Most search domains a resolver takes; more are dropped.
const MAX_SEARCHES: usize = 32;
/// How many dots make a name absolute for cluster-first pods.
const CLUSTER_NDOTS: &str = "ndots:5";

/// The resolver configuration of `pod`. Reads the node's resolv.conf when the policy (or a
/// fallback) needs it, so it is blocking I/O.
pub(crate) fn dns_config(
    pod: &Pod,
    id: &PodIdentity,
    node: &NodeContext,
) -> Result<DnsConfig, SpecError> {
    let spec = pod.spec.as_ref();
    let host_network = spec.and_then(|s| s.host_network).unwrap_or(false);
    let policy = spec
        .and_then(|s| s.dns_policy.as_deref())
        .unwrap_or("ClusterFirst");
    let cluster = match policy {
        "ClusterFirst" => !host_network,
        "ClusterFirstWithHostNet" => true,
        "Default" | "None" => false,
        other => {
            return Err(SpecError::field(
                &id.display,
                "spec.dnsPolicy",
                format!("unknown policy {other:?} (use ClusterFirst, ClusterFirstWithHostNet, Default or None)"),
            ))
        }
    };
    let mut config = if policy == "None" {
        DnsConfig::default()
    } else if cluster && !node.cluster_dns.is_empty() {
        let host = host_resolv_conf(&node.resolv_conf, id)?;
        cluster_config(node, &id.namespace, host.searches)
    } else {
        host_resolv_conf(&node.resolv_conf, id)?
    };
    if let Some(extra) = spec.and_then(|s| s.dns_config.as_ref()) {
        merge(&mut config, extra);
    }
    config.servers.truncate(MAX_NAMESERVERS);
    config.searches.truncate(MAX_SEARCHES);
    Ok(config)
}

/// Cluster DNS servers, the namespace's service domains before the host's search path, and
/// `ndots:5`.
fn cluster_config(node: &NodeContext, namespace: &str, host_searches: Vec<String>) -> DnsConfig {
    let mut searches = match node.cluster_domain.as_deref().filter(|d| !d.is_empty()) {
        Some(domain) => vec![
            format!("{namespace}.svc.{domain}"),
            format!("svc.{domain}"),
            domain.to_string(),
        ],
        None => Vec::new(),
    };
    for search in host_searches {
        push_unique(&mut searches, search);
    }
    DnsConfig {
        servers: node.cluster_dns.iter().map(ToString::to_string).collect(),
        searches,
        options: vec![CLUSTER_NDOTS.to_string()],
    }
}

/// The pod's own `dnsConfig` added to what the policy gave: servers and searches appended
/// (without repeats), options replacing any of the same name.
fn merge(config: &mut DnsConfig, extra: &PodDNSConfig) {
    for server in extra.nameservers.iter().flatten() {
        push_unique(&mut config.servers, server.clone());
    }
    for search in extra.searches.iter().flatten() {
        push_unique(&mut config.searches, search.clone());
    }
    for option in extra.options.iter().flatten() {
        let Some(name) = option.name.as_deref().filter(|n| !n.is_empty()) else {
            continue;
        };
        config.options.retain(|o| option_name(o) != name);
        config.options.push(match option.value.as_deref() {
            Some(value) => format!("{name}:{value}"),
            None => name.to_string(),
        });
    }
}

fn option_name(option: &str) -> &str {
    option.split_once(':').map_or(option, |(name, _)| name)
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Servers, search domains and options of a resolv.conf; an empty path means none.
fn host_resolv_conf(path: &Path, id: &PodIdentity) -> Result<DnsConfig, SpecError> {
    if path.as_os_str().is_empty() {
        return Ok(DnsConfig::default());
    }
    let text = std::fs::read_to_string(path).map_err(|e| SpecError::host(&id.display, path, &e))?;
    Ok(parse_resolv_conf(&text))
}

fn parse_resolv_conf(text: &str) -> DnsConfig {
    let mut config = DnsConfig::default();
    let mut domain = None;
    for line in text.lines() {
        let line = line.split(['#', ';']).next().unwrap_or_default();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("nameserver") => config.servers.extend(words.next().map(String::from)),
            // The last search or domain line wins, as in the C resolver.
            Some("search") => {
                config.searches = words.map(String::from).collect();
                domain = None;
            }
            Some("domain") => {
                domain = words.next().map(String::from);
                config.searches.clear();
            }
            Some("options") => config.options.extend(words.map(String::from)),
            _ => {}
        }
    }
    config.searches.extend(domain);
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::spec::test_pods::{node, pod_with};
    use sergeant_messages::pods::core::PodDNSConfigOption;

    const HOST: &str = "# host\nnameserver 192.0.2.53\nsearch corp.example lab.example\noptions rotate timeout:2\n";

    fn setup(policy: Option<&str>, host_network: bool) -> (tempfile::TempDir, Pod, NodeContext) {
        let dir = tempfile::tempdir().unwrap();
        let node = node(dir.path().to_path_buf());
        std::fs::write(&node.resolv_conf, HOST).unwrap();
        let mut pod = pod_with(vec![], vec![]);
        let spec = pod.spec.as_mut().unwrap();
        spec.dns_policy = policy.map(Into::into);
        spec.host_network = Some(host_network);
        (dir, pod, node)
    }

    fn config(pod: &Pod, node: &NodeContext) -> Result<DnsConfig, SpecError> {
        dns_config(pod, &PodIdentity::of(pod).unwrap(), node)
    }

    #[test]
    fn cluster_first_uses_cluster_dns_and_service_domains() {
        let (_dir, pod, node) = setup(None, false);
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers, vec!["10.96.0.10"]);
        assert_eq!(
            dns.searches,
            vec![
                "ns.svc.cluster.local",
                "svc.cluster.local",
                "cluster.local",
                "corp.example",
                "lab.example"
            ]
        );
        assert_eq!(dns.options, vec!["ndots:5"]);
    }

    #[test]
    fn without_cluster_dns_or_on_the_host_network_the_host_file_is_used() {
        let (_dir, pod, mut node) = setup(Some("ClusterFirst"), true);
        let host = config(&pod, &node).unwrap();
        assert_eq!(host.servers, vec!["192.0.2.53"]);
        assert_eq!(host.searches, vec!["corp.example", "lab.example"]);
        assert_eq!(host.options, vec!["rotate", "timeout:2"]);
        let (_dir2, pod, _) = setup(Some("ClusterFirst"), false);
        node.cluster_dns.clear();
        assert_eq!(config(&pod, &node).unwrap(), host);
        let (_dir3, pod, node) = setup(Some("ClusterFirstWithHostNet"), true);
        assert_eq!(config(&pod, &node).unwrap().servers, vec!["10.96.0.10"]);
    }

    #[test]
    fn none_takes_only_the_pods_dns_config_and_it_merges_everywhere() {
        let (_dir, mut pod, node) = setup(Some("None"), false);
        let spec = pod.spec.as_mut().unwrap();
        spec.dns_config = Some(PodDNSConfig {
            nameservers: Some(vec!["1.1.1.1".into()]),
            searches: Some(vec!["a.example".into()]),
            options: Some(vec![
                PodDNSConfigOption {
                    name: Some("ndots".into()),
                    value: Some("2".into()),
                },
                PodDNSConfigOption {
                    name: Some("edns0".into()),
                    value: None,
                },
            ]),
        });
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers, vec!["1.1.1.1"]);
        assert_eq!(dns.searches, vec!["a.example"]);
        assert_eq!(dns.options, vec!["ndots:2", "edns0"]);
        pod.spec.as_mut().unwrap().dns_policy = None;
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers, vec!["10.96.0.10", "1.1.1.1"]);
        assert_eq!(dns.options, vec!["ndots:2", "edns0"]);
    }

    #[test]
    fn bad_policy_and_missing_host_file_are_errors() {
        let (_dir, pod, node) = setup(Some("Sometimes"), false);
        assert!(config(&pod, &node)
            .unwrap_err()
            .to_string()
            .contains("spec.dnsPolicy"));
        let (dir, pod, node) = setup(Some("Default"), false);
        std::fs::remove_file(dir.path().join("resolv.conf")).unwrap();
        assert!(matches!(config(&pod, &node), Err(SpecError::Host { .. })));
    }

    #[test]
    fn resolv_conf_domain_and_limits() {
        let parsed = parse_resolv_conf("domain x.example\nnameserver a\nnameserver b ; c\n");
        assert_eq!(parsed.searches, vec!["x.example"]);
        assert_eq!(parsed.servers, vec!["a", "b"]);
    }
}
