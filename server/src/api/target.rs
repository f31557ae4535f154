//! Finding the container a kubelet API request names (`{namespace}/{pod}/{container}`) among
//! the node's pods, with upstream's 404 and 400 answers when it cannot.

use std::sync::Arc;

use axum::http::StatusCode;
use sergeant_messages::pods::core::{Container, ContainerStatus, Pod};

use crate::ServerDeps;
use sergeant_actors::pod_manager::ListPods;
use sergeant_core::kind::container_named;

/// A request's failure: the status and the message.
pub type Failure = (StatusCode, String);

/// The named container of a pod on this node.
pub struct NamedContainer {
    /// Its pod.
    pub pod: Arc<Pod>,
    /// Its spec: what it was created with (`stdin`, `tty`) decides what may attach to it.
    pub spec: Container,
    /// Its status, when the pod has reported one.
    pub status: Option<ContainerStatus>,
}

/// Finds the pod `namespace/name` on this node.
///
/// # Errors
/// 404 for an unknown pod, 503 when the pod manager cannot be asked.
pub async fn find_pod(deps: &ServerDeps, namespace: &str, name: &str) -> Result<Arc<Pod>, Failure> {
    let pods = deps.pods.send(ListPods).await.map_err(|e| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the pod manager is unavailable: {e}"),
        )
    })?;
    pods.into_iter()
        .find(|p| {
            p.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && p.metadata.name.as_deref() == Some(name)
        })
        .ok_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                format!("pod {namespace}/{name} not found"),
            )
        })
}

/// Finds `namespace/name`'s container `container`, of any kind (an ephemeral container too:
/// `kubectl debug` attaches to one, logs and exec name it).
///
/// # Errors
/// 404 for an unknown pod or container, 503 when the pod manager cannot be asked.
pub async fn find(
    deps: &ServerDeps,
    namespace: &str,
    name: &str,
    container: &str,
) -> Result<NamedContainer, Failure> {
    let pod = find_pod(deps, namespace, name).await?;
    let spec = container_named(&pod, container).map(|(c, _)| c.into_owned());
    let Some(spec) = spec else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("container {container:?} is not valid for pod {name:?}"),
        ));
    };
    let status = pod.status.as_ref().and_then(|s| {
        s.container_statuses
            .iter()
            .chain(s.init_container_statuses.iter())
            .chain(s.ephemeral_container_statuses.iter())
            .flatten()
            .find(|c| c.name == container)
            .cloned()
    });
    Ok(NamedContainer { pod, spec, status })
}

/// The runtime ID of a status's current instance, or of its previous one (`previous`).
///
/// # Errors
/// 400 when that instance does not exist, naming why.
pub fn container_id(
    named: &NamedContainer,
    container: &str,
    previous: bool,
) -> Result<String, Failure> {
    let name = named.pod.metadata.name.clone().unwrap_or_default();
    let status = named.status.as_ref();
    let id = if previous {
        status
            .and_then(|s| s.last_state.as_ref())
            .and_then(|s| s.terminated.as_ref())
            .and_then(|t| t.container_id.clone())
            .ok_or_else(|| {
                (
                    StatusCode::BAD_REQUEST,
                    format!(
                        "previous terminated container {container:?} in pod {name:?} not found"
                    ),
                )
            })?
    } else {
        status.and_then(|s| s.container_id.clone()).ok_or_else(|| {
            let waiting = status
                .and_then(|s| s.state.as_ref())
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.clone())
                .unwrap_or_else(|| "ContainerCreating".to_owned());
            (
                StatusCode::BAD_REQUEST,
                format!("container {container:?} in pod {name:?} is waiting to start: {waiting}"),
            )
        })?
    };
    Ok(id
        .split_once("://")
        .map_or(id.clone(), |(_, raw)| raw.to_owned()))
}

/// The runtime ID of the running instance of `namespace/pod`'s container `container`: what
/// exec, attach and run act on.
///
/// # Errors
/// As [`find`] and [`container_id`].
pub async fn current_container_id(
    deps: &ServerDeps,
    namespace: &str,
    pod: &str,
    container: &str,
) -> Result<String, Failure> {
    let named = find(deps, namespace, pod, container).await?;
    container_id(&named, container, false)
}
