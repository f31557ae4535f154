//! What the runtime shows of one pod: its sandboxes and containers, found by the pod UID label.
//! This is the "observed" half of every sync (the view itself is `sergeant_core::runtime`).

use std::collections::HashMap;

use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::runtime::RuntimePort;
use sergeant_core::labels;
use sergeant_core::runtime::{ObservedContainer, PodRuntime};

fn by_uid(uid: &str) -> HashMap<String, String> {
    [(labels::POD_UID.to_owned(), uid.to_owned())].into()
}

/// Reads everything the runtime has of the pod `uid`: its sandboxes and containers listed
/// together, then the newest sandbox's status and every container's status together (two
/// round trips, whatever the number of containers).
///
/// # Errors
/// The runtime's error of any of the list or status calls.
pub async fn observe(port: &RuntimePort, uid: &str) -> Result<PodRuntime, RuntimeError> {
    let (sandboxes, listed) = futures::try_join!(
        port.call(cri::ListPodSandboxRequest {
            filter: Some(cri::PodSandboxFilter {
                label_selector: by_uid(uid),
                ..Default::default()
            }),
        }),
        port.call(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: by_uid(uid),
                ..Default::default()
            }),
        }),
    )?;
    let mut sandboxes = sandboxes.items;
    sandboxes.sort_by_key(|s| std::cmp::Reverse(s.created_at));
    let containers = listed
        .containers
        .into_iter()
        .map(|c| (c.pod_sandbox_id, c.id))
        .collect();
    let newest = sandboxes.first().map(|s| s.id.clone());
    let (sandbox_status, containers) = statuses(port, newest, containers).await?;
    Ok(PodRuntime {
        sandboxes,
        sandbox_status,
        containers,
    })
}

/// What the runtime shows now of the pod last seen as `known`, when the only change since is
/// the containers `started` (sandbox ID, container ID): the statuses of the newest sandbox,
/// the known containers and the started ones, in one round trip. The look after a sync that
/// started containers — the status a watcher waits for — is this one; anything else that
/// changed meanwhile (a container that died) comes with the PLEG event that follows.
///
/// # Errors
/// The runtime's error of any of the status calls.
pub async fn refresh(
    port: &RuntimePort,
    known: PodRuntime,
    started: Vec<(String, String)>,
) -> Result<PodRuntime, RuntimeError> {
    let containers = known
        .containers
        .into_iter()
        .map(|c| (c.sandbox_id, c.status.id))
        .chain(started)
        .collect();
    let newest = known.sandboxes.first().map(|s| s.id.clone());
    let (sandbox_status, containers) = statuses(port, newest, containers).await?;
    Ok(PodRuntime {
        sandboxes: known.sandboxes,
        sandbox_status,
        containers,
    })
}

/// The status of the sandbox `sandbox_id` and of each of `containers` (sandbox ID, container
/// ID), all asked at once; the containers newest first, those gone meanwhile left out.
async fn statuses(
    port: &RuntimePort,
    sandbox_id: Option<String>,
    containers: Vec<(String, String)>,
) -> Result<(Option<cri::PodSandboxStatus>, Vec<ObservedContainer>), RuntimeError> {
    let sandbox_status = async {
        match sandbox_id {
            Some(pod_sandbox_id) => port
                .call(cri::PodSandboxStatusRequest {
                    pod_sandbox_id,
                    verbose: false,
                })
                .await
                .map(|answer| answer.status),
            None => Ok(None),
        }
    };
    let container_statuses =
        futures::future::join_all(containers.into_iter().map(|(sandbox_id, container_id)| {
            let status = port.call(cri::ContainerStatusRequest {
                container_id,
                verbose: false,
            });
            async move { (sandbox_id, status.await) }
        }));
    let (sandbox_status, container_statuses) = futures::join!(sandbox_status, container_statuses);
    let mut containers = Vec::with_capacity(container_statuses.len());
    for (sandbox_id, status) in container_statuses {
        match status {
            Ok(cri::ContainerStatusResponse {
                status: Some(status),
                ..
            }) => containers.push(ObservedContainer { sandbox_id, status }),
            Ok(_) | Err(RuntimeError::NotFound { .. }) => {} // removed meanwhile
            Err(err) => return Err(err),
        }
    }
    containers.sort_by_key(|c| std::cmp::Reverse(c.status.created_at));
    Ok((sandbox_status?, containers))
}
