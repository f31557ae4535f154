//! The pod's resolver configuration from its `dnsPolicy` and `dnsConfig`: cluster DNS, the
//! host's resolv.conf, or only what the pod says, cut to what resolvers accept.

use std::net::IpAddr;

use k8s_cri::v1::DnsConfig;
use k8s_openapi::api::core::v1::{Pod, PodDNSConfig};

use crate::context::{NodeContext, PodIdentity, SpecError};

/// Most name servers a resolver uses; more are dropped.
const MAX_NAMESERVERS: usize = 3;
/// Most search domains a resolver takes; more are dropped.
const MAX_SEARCHES: usize = 32;
/// Longest search line (domains joined by blanks); domains are dropped from its end to fit.
const MAX_SEARCH_LINE: usize = 2048;
/// Longest search domain; longer ones make some resolvers abort, so they are dropped.
const MAX_SEARCH_DOMAIN: usize = 253;
/// How many dots make a name absolute for cluster-first pods.
const CLUSTER_NDOTS: &str = "ndots:5";

/// The resolver configuration of `pod`; `host_text` is the text of the node's
/// resolv.conf (`node.resolv_conf`), read by the caller, needed when the policy (or a
/// fallback) takes the host's resolvers.
pub fn dns_config(
    pod: &Pod,
    id: &PodIdentity,
    node: &NodeContext,
    host_text: Option<&str>,
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
        let host = host_resolv_conf(node, host_text, id)?;
        cluster_config(node, &id.namespace, host.searches)
    } else if node.resolv_conf.as_os_str().is_empty() {
        local_resolver(node)
    } else {
        host_resolv_conf(node, host_text, id)?
    };
    if let Some(extra) = spec.and_then(|s| s.dns_config.as_ref()) {
        merge(&mut config, extra);
    }
    fit_limits(&mut config, id);
    Ok(config)
}

/// The host resolver of a node configured without a resolv.conf: the node's own loopback
/// address and an empty search path, so the runtime does not fall back to its own host file
/// and lookups stay on the node, as upstream does.
fn local_resolver(node: &NodeContext) -> DnsConfig {
    let loopback = match node.node_ip {
        Some(IpAddr::V6(_)) => "::1",
        _ => "127.0.0.1",
    };
    DnsConfig {
        servers: vec![loopback.to_string()],
        searches: vec![".".to_string()],
        options: Vec::new(),
    }
}

/// Cuts the servers to [`MAX_NAMESERVERS`] and the search path to [`MAX_SEARCHES`] domains of
/// at most [`MAX_SEARCH_DOMAIN`] characters in a line of at most [`MAX_SEARCH_LINE`], warning
/// when something is left out.
fn fit_limits(config: &mut DnsConfig, id: &PodIdentity) {
    let (servers, searches) = (config.servers.len(), config.searches.len());
    config.servers.truncate(MAX_NAMESERVERS);
    config.searches.truncate(MAX_SEARCHES);
    config.searches.retain(|s| s.len() <= MAX_SEARCH_DOMAIN);
    while config.searches.iter().map(|s| s.len() + 1).sum::<usize>() > MAX_SEARCH_LINE + 1 {
        config.searches.pop();
    }
    if servers != config.servers.len() || searches != config.searches.len() {
        tracing::warn!(
            pod = %id.display,
            servers = %config.servers.join(" "),
            searches = %config.searches.join(" "),
            "DNS limits exceeded: some name servers or search domains were left out"
        );
    }
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

/// Servers, search domains and options of the node's resolv.conf, whose text is `text`; an
/// empty path means none.
fn host_resolv_conf(
    node: &NodeContext,
    text: Option<&str>,
    id: &PodIdentity,
) -> Result<DnsConfig, SpecError> {
    if node.resolv_conf.as_os_str().is_empty() {
        return Ok(DnsConfig::default());
    }
    let text = text.ok_or_else(|| SpecError::Host {
        pod: id.display.clone(),
        path: node.resolv_conf.display().to_string(),
        reason: "the node's resolv.conf could not be read".to_owned(),
    })?;
    Ok(parse_resolv_conf(text))
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
            // A trailing dot is dropped so one domain counts once against the limits.
            Some("search") => {
                config.searches = words
                    .map(|w| w.strip_suffix('.').unwrap_or(w))
                    .filter(|w| !w.is_empty())
                    .map(String::from)
                    .collect();
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
    use crate::testing::{node, pod_with};
    use k8s_openapi::api::core::v1::PodDNSConfigOption;
    use std::path::PathBuf;

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
        let text = std::fs::read_to_string(&node.resolv_conf).ok();
        dns_config(pod, &PodIdentity::of(pod).unwrap(), node, text.as_deref())
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
        let parsed = parse_resolv_conf("search a.example. . b.example\n");
        assert_eq!(parsed.searches, vec!["a.example", "b.example"]);
    }

    #[test]
    fn without_a_resolv_conf_host_lookups_stay_on_the_node() {
        let (_dir, pod, mut node) = setup(Some("Default"), false);
        node.resolv_conf = PathBuf::new();
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers, vec!["127.0.0.1"]);
        assert_eq!(dns.searches, vec!["."]);
        node.node_ip = Some("2001:db8::1".parse().unwrap());
        assert_eq!(config(&pod, &node).unwrap().servers, vec!["::1"]);
        // Cluster-first pods keep the cluster servers and domains.
        let (_dir2, pod, _) = setup(None, false);
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers, vec!["10.96.0.10"]);
        assert_eq!(dns.searches.len(), 3);
    }

    #[test]
    fn servers_and_search_domains_are_cut_to_the_resolver_limits() {
        let (_dir, mut pod, node) = setup(Some("None"), false);
        let long = "a".repeat(254);
        let mut searches: Vec<String> = vec![long.clone()];
        searches.extend((0..40).map(|i| format!("{i:0>99}")));
        pod.spec.as_mut().unwrap().dns_config = Some(PodDNSConfig {
            nameservers: Some((1..=5).map(|i| format!("192.0.2.{i}")).collect()),
            searches: Some(searches),
            options: None,
        });
        let dns = config(&pod, &node).unwrap();
        assert_eq!(dns.servers.len(), 3);
        assert!(!dns.searches.contains(&long));
        // 31 domains of 99 characters fit in 32 entries; 20 of them fill 2048 characters.
        assert_eq!(dns.searches.len(), 20);
        assert!(dns.searches.join(" ").len() <= MAX_SEARCH_LINE);
        assert_eq!(dns.searches[0], format!("{:0>99}", 0));
    }
}
