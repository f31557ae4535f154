//! The pod's hostname and its kubelet-managed `/etc/hosts`: the file `<pod dir>/etc-hosts` that
//! every container of a Linux pod gets at `/etc/hosts` (unless it mounts something there
//! itself), so the pod resolves its own name, its FQDN under `spec.subdomain` and the
//! `spec.hostAliases` without DNS.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{HostAlias, Pod, PodSpec};

use crate::context::{NodeContext, PodIdentity, SpecError};
use crate::names::{label_problem, subdomain_problem};

/// Where the hosts file is, in a container and on the node (which a host-network pod copies).
pub const ETC_HOSTS: &str = "/etc/hosts";
/// The managed hosts file's name in the pod directory, as upstream names it.
pub const HOSTS_FILE: &str = "etc-hosts";
/// Longest hostname the kernel and DNS accept.
const MAX_HOSTNAME: usize = 63;
/// Longest `spec.hostnameOverride`: the kernel's limit for a UTS hostname, as upstream checks.
const MAX_HOSTNAME_OVERRIDE: usize = 64;
/// First line of the hosts file of a pod with its own network.
const MANAGED_HEADER: &str = "# Kubernetes-managed hosts file.\n";
/// First line of the hosts file of a host-network pod, before the node's own entries.
const HOST_NETWORK_HEADER: &str = "# Kubernetes-managed hosts file (host network).\n";
/// The loopback and IPv6 multicast names every pod-network hosts file starts with.
const LOCAL_ENTRIES: &str = "127.0.0.1\tlocalhost\n\
                             ::1\tlocalhost ip6-localhost ip6-loopback\n\
                             fe00::0\tip6-localnet\n\
                             fe00::0\tip6-mcastprefix\n\
                             fe00::1\tip6-allnodes\n\
                             fe00::2\tip6-allrouters\n";

/// The pod's hostname: `spec.hostnameOverride` as it is (upstream's HostnameOverride, on by
/// default), else `spec.hostname`, else the pod name cut to 63 characters without a trailing
/// `-` or `.`. A pod-network sandbox takes it as its UTS hostname and the hosts file maps the
/// pod IPs to it, so both come from here.
///
/// # Errors
///
/// [`SpecError::Field`] when `spec.hostnameOverride` is not an RFC 1123 subdomain of at most
/// 64 characters, or `spec.hostname` is not an RFC 1123 label.
pub(super) fn pod_hostname(spec: &PodSpec, id: &PodIdentity) -> Result<String, SpecError> {
    if let Some(hostname) = hostname_override(spec) {
        let problem = subdomain_problem(hostname).or_else(|| {
            (hostname.len() > MAX_HOSTNAME_OVERRIDE)
                .then(|| format!("is longer than {MAX_HOSTNAME_OVERRIDE} characters"))
        });
        if let Some(reason) = problem {
            return Err(SpecError::field(
                &id.display,
                "spec.hostnameOverride",
                reason,
            ));
        }
        return Ok(hostname.to_string());
    }
    if let Some(hostname) = spec.hostname.as_deref().filter(|h| !h.is_empty()) {
        if let Some(reason) = label_problem(hostname) {
            return Err(SpecError::field(&id.display, "spec.hostname", reason));
        }
        return Ok(hostname.to_string());
    }
    let cut: String = id.name.chars().take(MAX_HOSTNAME).collect();
    Ok(cut.trim_end_matches(['-', '.']).to_string())
}

/// `spec.hostnameOverride` when set and not empty.
fn hostname_override(spec: &PodSpec) -> Option<&str> {
    spec.hostname_override.as_deref().filter(|h| !h.is_empty())
}

/// `<subdomain>.<namespace>.svc.<clusterDomain>` when the pod names a `spec.subdomain` (without
/// the cluster domain part on a node that has none); `None` otherwise, and for a pod with a
/// `spec.hostnameOverride`, whose hostname is its whole name.
fn host_domain(
    spec: &PodSpec,
    id: &PodIdentity,
    node: &NodeContext,
) -> Result<Option<String>, SpecError> {
    if hostname_override(spec).is_some() {
        return Ok(None);
    }
    let Some(subdomain) = spec.subdomain.as_deref().filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if let Some(reason) = label_problem(subdomain) {
        return Err(SpecError::field(&id.display, "spec.subdomain", reason));
    }
    let service = format!("{subdomain}.{}.svc", id.namespace);
    Ok(Some(
        match node.cluster_domain.as_deref().filter(|d| !d.is_empty()) {
            Some(domain) => format!("{service}.{domain}"),
            None => service,
        },
    ))
}

/// The host path of the pod's managed hosts file when its containers get one: a Linux pod on
/// the host network, or on its own network once it has an IP (before that, upstream mounts
/// none either). Pure; [`prepare_hosts_file`] writes the file.
pub(super) fn managed_hosts_path(
    pod: &Pod,
    id: &PodIdentity,
    node: &NodeContext,
    has_ip: bool,
) -> Option<PathBuf> {
    let spec = pod.spec.as_ref()?;
    let windows = spec.os.as_ref().is_some_and(|os| os.name == "windows");
    let host_network = spec.host_network == Some(true);
    (!windows && (host_network || has_ip)).then(|| node.pod_dir(&id.uid).join(HOSTS_FILE))
}

/// The pod's managed hosts file for the sandbox addresses `pod_ips` (primary first): its path
/// and content; `None` when the pod gets none (see [`managed_hosts_path`]). A host-network pod's
/// file is the node's own (`node_hosts`, the text of its `/etc/hosts`, read by the caller for
/// such a pod) with the pod's aliases. `sergeant_host::pod_files::prepare_hosts_file` writes it.
///
/// # Errors
///
/// [`SpecError::Field`] for a pod without name or usable UID, or a `spec.hostname`,
/// `spec.subdomain` or `spec.hostAliases` entry that cannot go into a hosts file;
/// [`SpecError::Host`] when a host-network pod's node hosts file was not read.
pub fn hosts_file(
    pod: &Pod,
    pod_ips: &[String],
    node: &NodeContext,
    node_hosts: Option<&str>,
) -> Result<Option<(PathBuf, String)>, SpecError> {
    let id = PodIdentity::of(pod)?;
    let Some(path) = managed_hosts_path(pod, &id, node, !pod_ips.is_empty()) else {
        return Ok(None);
    };
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let aliases = spec.host_aliases.as_deref().unwrap_or_default();
    check_aliases(aliases, &id)?;
    let content = if spec.host_network == Some(true) {
        let text = node_hosts.ok_or_else(|| SpecError::Host {
            pod: id.display.clone(),
            path: ETC_HOSTS.to_owned(),
            reason: "the node's hosts file was not read".to_owned(),
        })?;
        host_network_content(text, aliases)
    } else {
        let hostname = pod_hostname(spec, &id)?;
        let domain = host_domain(spec, &id, node)?;
        managed_content(pod_ips, &hostname, domain.as_deref(), aliases)
    };
    Ok(Some((path, content)))
}

/// Refuses host aliases that would not make one valid hosts line each: an IP that is not an
/// address, a hostname that is not an RFC 1123 subdomain (a blank or `#` would break the line).
fn check_aliases(aliases: &[HostAlias], id: &PodIdentity) -> Result<(), SpecError> {
    for (index, alias) in aliases.iter().enumerate() {
        let at = |name: &str| format!("spec.hostAliases[{index}].{name}");
        if alias.ip.parse::<IpAddr>().is_err() {
            let reason = format!("{:?} is not an IP address", alias.ip);
            return Err(SpecError::field(&id.display, at("ip"), reason));
        }
        for (n, hostname) in alias.hostnames.iter().flatten().enumerate() {
            if let Some(reason) = subdomain_problem(hostname) {
                return Err(SpecError::field(
                    &id.display,
                    at(&format!("hostnames[{n}]")),
                    reason,
                ));
            }
        }
    }
    Ok(())
}

/// The hosts file of a pod with its own network: the local names, then each pod IP with the
/// FQDN (when there is a domain) and the hostname, then the host aliases.
fn managed_content(
    pod_ips: &[String],
    hostname: &str,
    domain: Option<&str>,
    aliases: &[HostAlias],
) -> String {
    let mut text = format!("{MANAGED_HEADER}{LOCAL_ENTRIES}");
    for ip in pod_ips {
        let _ = match domain {
            Some(domain) => writeln!(text, "{ip}\t{hostname}.{domain}\t{hostname}"),
            None => writeln!(text, "{ip}\t{hostname}"),
        };
    }
    text + &alias_entries(aliases)
}

/// The hosts file of a host-network pod: the node's own file under a header, then the host
/// aliases.
fn host_network_content(node_hosts: &str, aliases: &[HostAlias]) -> String {
    format!(
        "{HOST_NETWORK_HEADER}{node_hosts}{}",
        alias_entries(aliases)
    )
}

/// A blank line, a comment and one line per host alias with all its names; nothing without
/// aliases.
fn alias_entries(aliases: &[HostAlias]) -> String {
    if aliases.is_empty() {
        return String::new();
    }
    let mut text = String::from("\n# Entries added by HostAliases.\n");
    for alias in aliases {
        let names = alias.hostnames.as_deref().unwrap_or_default().join("\t");
        let _ = writeln!(text, "{}\t{names}", alias.ip);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod_with};
    use k8s_openapi::api::core::v1::PodOS;

    fn alias(ip: &str, names: &[&str]) -> HostAlias {
        HostAlias {
            ip: ip.into(),
            hostnames: Some(names.iter().map(ToString::to_string).collect()),
        }
    }

    const LOCAL: &str = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n\
                         fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\n\
                         fe00::2\tip6-allrouters\n";

    #[test]
    fn a_pod_network_file_maps_every_pod_ip_to_the_fqdn_and_hostname() {
        let ips = ["10.88.0.5".to_string(), "fd00::5".to_string()];
        let text = managed_content(&ips, "web", Some("sub.ns.svc.cluster.local"), &[]);
        assert_eq!(
            text,
            format!(
                "# Kubernetes-managed hosts file.\n{LOCAL}\
                 10.88.0.5\tweb.sub.ns.svc.cluster.local\tweb\n\
                 fd00::5\tweb.sub.ns.svc.cluster.local\tweb\n"
            )
        );
        let plain = managed_content(&ips[..1], "web", None, &[]);
        assert!(
            plain.ends_with("fe00::2\tip6-allrouters\n10.88.0.5\tweb\n"),
            "{plain}"
        );
    }

    #[test]
    fn without_an_ip_only_the_local_names_are_there() {
        let text = managed_content(&[], "web", Some("sub.ns.svc"), &[]);
        assert_eq!(text, format!("# Kubernetes-managed hosts file.\n{LOCAL}"));
    }

    #[test]
    fn host_aliases_follow_under_their_comment() {
        let aliases = [
            alias("127.0.0.1", &["foo.local", "bar.local"]),
            alias("10.1.2.3", &["foo.remote"]),
        ];
        let text = managed_content(&["10.88.0.5".into()], "web", None, &aliases);
        assert!(
            text.ends_with(
                "10.88.0.5\tweb\n\n# Entries added by HostAliases.\n\
                 127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_host_network_file_is_the_nodes_file_and_the_aliases() {
        let text = host_network_content(
            "127.0.0.1 localhost\n192.0.2.1 node-a\n",
            &[alias("10.1.2.3", &["db"])],
        );
        assert_eq!(
            text,
            "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\
             192.0.2.1 node-a\n\n# Entries added by HostAliases.\n10.1.2.3\tdb\n"
        );
    }

    #[test]
    fn hostnames_come_from_the_spec_or_the_cut_pod_name() {
        let mut pod = pod_with(vec![], vec![]);
        pod.metadata.name = Some(format!("{}-{}", "a".repeat(62), "b"));
        let id = PodIdentity::of(&pod).unwrap();
        let mut spec = PodSpec::default();
        assert_eq!(pod_hostname(&spec, &id).unwrap(), "a".repeat(62));
        spec.hostname = Some("custom".into());
        assert_eq!(pod_hostname(&spec, &id).unwrap(), "custom");
        spec.hostname = Some("Not_A_Label".into());
        let error = pod_hostname(&spec, &id).unwrap_err().to_string();
        assert!(error.contains("spec.hostname: \"Not_A_Label\""), "{error}");
    }

    #[test]
    fn the_domain_is_the_subdomain_under_the_namespace_services() {
        let mut node = node(PathBuf::from("/r"));
        let id = PodIdentity::of(&pod_with(vec![], vec![])).unwrap();
        let mut spec = PodSpec::default();
        assert_eq!(host_domain(&spec, &id, &node).unwrap(), None);
        spec.subdomain = Some("sub".into());
        let domain = host_domain(&spec, &id, &node).unwrap();
        assert_eq!(domain.as_deref(), Some("sub.ns.svc.cluster.local"));
        node.cluster_domain = None;
        let domain = host_domain(&spec, &id, &node).unwrap();
        assert_eq!(domain.as_deref(), Some("sub.ns.svc"));
        spec.subdomain = Some("a.b".into());
        let error = host_domain(&spec, &id, &node).unwrap_err().to_string();
        assert!(error.contains("spec.subdomain"), "{error}");
    }

    #[test]
    fn a_hostname_override_is_the_whole_name_without_a_domain() {
        let node = node(PathBuf::from("/r"));
        let mut pod = pod_with(vec![], vec![]);
        let spec = pod.spec.as_mut().unwrap();
        spec.hostname = Some("custom-host".into());
        spec.subdomain = Some("t".into());
        spec.hostname_override = Some("override.example.host".into());
        let id = PodIdentity::of(&pod).unwrap();
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(pod_hostname(spec, &id).unwrap(), "override.example.host");
        assert_eq!(host_domain(spec, &id, &node).unwrap(), None);
        let (_, text) = hosts_file(&pod, &["10.88.0.5".into()], &node, None)
            .unwrap()
            .unwrap();
        assert!(
            text.contains("10.88.0.5\toverride.example.host\n"),
            "{text}"
        );
        for bad in ["Upper.case", "a..b", &"a".repeat(65)] {
            let mut spec = spec.clone();
            spec.hostname_override = Some(bad.to_string());
            let error = pod_hostname(&spec, &id).unwrap_err().to_string();
            assert!(error.contains("spec.hostnameOverride"), "{bad}: {error}");
        }
    }

    #[test]
    fn the_file_is_for_pods_with_an_ip_or_the_host_network_on_linux() {
        let node = node(PathBuf::from("/r"));
        let mut pod = pod_with(vec![], vec![]);
        let spec = pod.spec.as_mut().unwrap();
        spec.hostname = Some("h".into());
        spec.host_aliases = Some(vec![alias("10.1.2.3", &["db"])]);
        assert_eq!(hosts_file(&pod, &[], &node, None).unwrap(), None);
        let (path, text) = hosts_file(&pod, &["10.88.0.5".into()], &node, None)
            .unwrap()
            .unwrap();
        assert_eq!(path, PathBuf::from("/r/pods/uid-1/etc-hosts"));
        assert!(text.contains("10.88.0.5\th\n"), "{text}");
        assert!(text.ends_with("10.1.2.3\tdb\n"), "{text}");
        pod.spec.as_mut().unwrap().os = Some(PodOS {
            name: "windows".into(),
        });
        assert_eq!(
            hosts_file(&pod, &["10.88.0.5".into()], &node, None).unwrap(),
            None
        );
        pod.spec.as_mut().unwrap().os = None;
        pod.spec.as_mut().unwrap().host_network = Some(true);
        assert!(
            hosts_file(&pod, &[], &node, None).is_err(),
            "needs the node's file"
        );
        let (_, text) = hosts_file(&pod, &[], &node, Some("127.0.0.1 node\n"))
            .unwrap()
            .unwrap();
        assert_eq!(
            text,
            "# Kubernetes-managed hosts file (host network).\n127.0.0.1 node\n\n# Entries added by HostAliases.\n10.1.2.3\tdb\n"
        );
    }

    #[test]
    fn bad_host_aliases_name_their_field() {
        let id = PodIdentity::of(&pod_with(vec![], vec![])).unwrap();
        let error = check_aliases(&[alias("10.1.2.3", &["ok"]), alias("nope", &[])], &id)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.hostAliases[1].ip: \"nope\" is not an IP address"),
            "{error}"
        );
        let error = check_aliases(&[alias("10.1.2.3", &["ok", "a b"])], &id)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.hostAliases[0].hostnames[1]"),
            "{error}"
        );
    }
}
