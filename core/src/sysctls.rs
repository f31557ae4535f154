//! Which sysctls a pod may set on this node, as upstream's allowlist decides: the safe set
//! (namespaced and isolated per pod) plus the node's `allowedUnsafeSysctls`, never one of a
//! namespace the pod shares with the host (`hostNetwork` for `net.*`, `hostIPC` for the IPC
//! ones). Entry points: [`Allowlist::of`] and [`Allowlist::check_pod`]; a refusal is the pod's
//! `SysctlForbidden` admission failure.

use k8s_openapi::api::core::v1::Pod;
use sergeant_config::sysctl::{normalize, SysctlNamespace, SysctlPattern};
use sergeant_config::KubeletConfiguration;

/// The sysctls every pod may set (upstream's safe set).
const SAFE: [&str; 12] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

/// The sysctls pods may set on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowlist(Vec<SysctlPattern>);

/// Why a pod's sysctl is refused: the message of upstream's `SysctlForbidden` rejection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("forbidden sysctl: {0}")]
pub struct Forbidden(String);

impl Allowlist {
    /// The safe sysctls and the node's `allowedUnsafeSysctls` (checked when the configuration
    /// was loaded, so every pattern parses).
    #[must_use]
    pub fn of(config: &KubeletConfiguration) -> Self {
        let safe = SAFE.iter().map(|name| SysctlPattern::parse(name));
        let node = config
            .allowed_unsafe_sysctls
            .iter()
            .map(|p| SysctlPattern::parse(p));
        Self(safe.chain(node).filter_map(Result::ok).collect())
    }

    /// Checks every sysctl of `pod`'s security context.
    ///
    /// # Errors
    ///
    /// [`Forbidden`] for the first sysctl that is not allowed, or is of a namespace the pod
    /// shares with the host.
    pub fn check_pod(&self, pod: &Pod) -> Result<(), Forbidden> {
        let Some(spec) = &pod.spec else {
            return Ok(());
        };
        let sysctls = spec
            .security_context
            .as_ref()
            .and_then(|sc| sc.sysctls.as_ref())
            .into_iter()
            .flatten();
        for sysctl in sysctls {
            let name = normalize(&sysctl.name);
            let Some(namespace) = self.0.iter().find_map(|p| p.allows(&name)) else {
                return Err(Forbidden(format!("{name:?} not allowlisted")));
            };
            let shared = match namespace {
                SysctlNamespace::Net => spec.host_network == Some(true),
                SysctlNamespace::Ipc => spec.host_ipc == Some(true),
            };
            if shared {
                return Err(Forbidden(format!(
                    "{name:?} not allowed with host {} enabled",
                    namespace.host_flag()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(sysctls: &[&str], host_network: bool, host_ipc: bool) -> Pod {
        let sysctls: Vec<_> = sysctls
            .iter()
            .map(|n| serde_json::json!({"name": n, "value": "1"}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {
                "hostNetwork": host_network, "hostIPC": host_ipc,
                "securityContext": {"sysctls": sysctls},
                "containers": [{"name": "c", "image": "i"}]
            }
        }))
        .unwrap()
    }

    fn list(unsafe_allowed: &[&str]) -> Allowlist {
        Allowlist::of(&KubeletConfiguration {
            allowed_unsafe_sysctls: unsafe_allowed.iter().map(|s| (*s).to_owned()).collect(),
            ..KubeletConfiguration::default()
        })
    }

    #[test]
    fn safe_sysctls_pass_and_unsafe_ones_need_the_node_to_allow_them() {
        let safe = pod(
            &["kernel.shm_rmid_forced", "net.ipv4.tcp_syncookies"],
            false,
            false,
        );
        assert_eq!(list(&[]).check_pod(&safe), Ok(()));
        let unsafe_pod = pod(&["kernel.msgmax", "net.core.somaxconn"], false, false);
        assert_eq!(
            list(&[]).check_pod(&unsafe_pod).unwrap_err().to_string(),
            "forbidden sysctl: \"kernel.msgmax\" not allowlisted"
        );
        assert_eq!(
            list(&["kernel.msg*", "net.core.somaxconn"]).check_pod(&unsafe_pod),
            Ok(())
        );
        assert!(list(&["kernel.msg*"]).check_pod(&unsafe_pod).is_err());
    }

    #[test]
    fn a_namespace_shared_with_the_host_forbids_its_sysctls() {
        let net = pod(&["net.ipv4.tcp_syncookies"], true, false);
        assert_eq!(
            list(&[]).check_pod(&net).unwrap_err().to_string(),
            "forbidden sysctl: \"net.ipv4.tcp_syncookies\" not allowed with host net enabled"
        );
        let ipc = pod(&["kernel.shm_rmid_forced"], false, true);
        assert!(list(&[])
            .check_pod(&ipc)
            .unwrap_err()
            .to_string()
            .ends_with("not allowed with host IPC enabled"));
        let other = pod(&["kernel.shm_rmid_forced"], true, false);
        assert_eq!(list(&[]).check_pod(&other), Ok(()));
    }

    #[test]
    fn slash_separated_names_are_checked_as_dotted() {
        let slashed = pod(&["net/ipv4/tcp_syncookies"], false, false);
        assert_eq!(list(&[]).check_pod(&slashed), Ok(()));
    }
}
