//! The RuntimeClasses that name pods' runtime handlers, from the watch of every RuntimeClass
//! ([`Every`]), as upstream's RuntimeClass manager (an informer).

use std::time::Duration;

use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::reflector::ObjectRef;
use sergeant_core::runtime_class::RuntimeClassError;

use super::every::Every;

/// The handler of the RuntimeClass `name` in `every`, waiting up to `wait` from its start for
/// its first list.
///
/// # Errors
/// [`RuntimeClassError::NotFound`] when no RuntimeClass has that name;
/// [`RuntimeClassError::Unavailable`] while the first list is not in.
pub(super) async fn handler(
    every: &Every<RuntimeClass>,
    name: &str,
    wait: Duration,
) -> Result<String, RuntimeClassError> {
    let store = every
        .ready(wait)
        .await
        .ok_or_else(|| RuntimeClassError::Unavailable {
            name: name.to_owned(),
            reason: "the node has not listed the RuntimeClasses yet",
        })?;
    store
        .get(&ObjectRef::new(name))
        .map(|class| class.handler.clone())
        .ok_or_else(|| RuntimeClassError::NotFound(name.to_owned()))
}
