//! The node's resolver file, which pods with `dnsPolicy: Default` (and cluster-first pods, for
//! its search domains) inherit; read for each sandbox configuration, as upstream does, so an
//! edit reaches the next pod.

use sergeant_core::spec::NodeContext;

/// The text of the node's resolv.conf (`resolvConf`); `None` when none is configured or it
/// cannot be read (a pod that needs it is then refused, naming the file).
#[must_use]
pub fn read_resolv_conf(node: &NodeContext) -> Option<String> {
    if node.resolv_conf.as_os_str().is_empty() {
        return None;
    }
    match std::fs::read_to_string(&node.resolv_conf) {
        Ok(text) => Some(text),
        Err(err) => {
            tracing::debug!(path = %node.resolv_conf.display(), "resolv.conf not read: {err}");
            None
        }
    }
}
