//! The cluster's services, for the variables of pods' containers, from the watch of every
//! service ([`Every`]), as upstream's service informer.

use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use kube::runtime::reflector::ObjectRef;

use super::every::Every;

/// The services of `namespace` (none unless `list`) and `default/kubernetes` from `every`;
/// `None` when its first list is not in within `wait` of its start.
pub(super) async fn services(
    every: &Every<Service>,
    namespace: &str,
    list: bool,
    wait: Duration,
) -> Option<(Vec<Service>, Option<Service>)> {
    let store = every.ready(wait).await?;
    let listed = if list {
        store
            .state_filter(|s| s.metadata.namespace.as_deref() == Some(namespace))
            .into_iter()
            .map(|s| (*s).clone())
            .collect()
    } else {
        Vec::new()
    };
    let master = store
        .get(&ObjectRef::new("kubernetes").within("default"))
        .map(|s| (*s).clone());
    Some((listed, master))
}
