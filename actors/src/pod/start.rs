//! Starting one container: its image per pull policy (with pull back-off), then create and
//! start through the runtime, then its postStart hook.

use std::sync::Arc;
use std::time::Instant;

use sergeant_messages::pods::core::{Container, Pod};
use sergeant_messages::runtime::cri;

use super::backoff::{Backoff, BackoffPolicy};
use super::hooks;
use super::spec::{self, ContainerKind, NodeContext};
use super::status::Waiting;
use super::volumes::VolumePlan;
use crate::runtime::RuntimePort;

/// Image pull back-off, as upstream: 10 s doubling to 300 s.
const PULL_BACKOFF: BackoffPolicy = BackoffPolicy {
    initial: std::time::Duration::from_secs(10),
    max: std::time::Duration::from_secs(300),
};

/// One container to start, with what it needs from its pod.
pub struct StartRequest {
    /// Its pod.
    pub pod: Arc<Pod>,
    /// Its spec.
    pub container: Container,
    /// Init, sidecar or regular.
    pub kind: ContainerKind,
    /// The sandbox it joins.
    pub sandbox_id: String,
    /// That sandbox's configuration (runtimes want it again on create and pull).
    pub sandbox_config: cri::PodSandboxConfig,
    /// How many times it was restarted before.
    pub restart_count: u32,
    /// The sandbox's IP, for `status.podIP` references in the environment.
    pub pod_ip: Option<String>,
}

fn waiting(reason: &str, message: impl Into<String>) -> Waiting {
    Waiting {
        reason: reason.to_owned(),
        message: message.into(),
    }
}

/// Pulls (per policy), creates and starts the container, then runs its postStart hook.
///
/// # Errors
/// Why the container is waiting: `ErrImagePull`, `ImagePullBackOff`, `ErrImageNeverPull`,
/// `CreateContainerConfigError`, `CreateContainerError`, `RunContainerError` or
/// `PostStartHookError`, with the runtime's message.
pub async fn start_container(
    port: &RuntimePort,
    node: &NodeContext,
    plan: &VolumePlan,
    pulls: &mut Backoff,
    request: StartRequest,
) -> Result<(), Waiting> {
    let image = request.container.image.clone().unwrap_or_default();
    ensure_image(port, pulls, &image, &request).await?;
    prepare_files(&request, node).await?;
    let config = spec::container_config(
        &request.pod,
        &request.container,
        request.kind,
        request.restart_count,
        node,
        plan,
        request.pod_ip.as_deref(),
    )
    .map_err(|e| waiting("CreateContainerConfigError", e.to_string()))?;
    let created = port
        .call(cri::CreateContainerRequest {
            pod_sandbox_id: request.sandbox_id.clone(),
            config: Some(config),
            sandbox_config: Some(request.sandbox_config.clone()),
        })
        .await
        .map_err(|e| waiting("CreateContainerError", e.to_string()))?;
    let container_id = created.container_id;
    port.call(cri::StartContainerRequest {
        container_id: container_id.clone(),
    })
    .await
    .map_err(|e| waiting("RunContainerError", e.to_string()))?;
    tracing::info!(
        container = request.container.name,
        id = container_id,
        "container started"
    );
    if let Some(handler) = request
        .container
        .lifecycle
        .as_ref()
        .and_then(|l| l.post_start.as_ref())
    {
        let target = super::target::ContainerTarget {
            container_id: &container_id,
            container: &request.container,
            pod_ip: request.pod_ip.as_deref(),
        };
        if let Err(message) = hooks::run(port, &target, handler, hooks::DEFAULT_HOOK_TIMEOUT).await
        {
            let _ = port
                .call(cri::StopContainerRequest {
                    container_id,
                    timeout: 0,
                })
                .await;
            return Err(waiting("PostStartHookError", message));
        }
    }
    Ok(())
}

/// Creates the container's log directory and termination-message file on the node.
async fn prepare_files(request: &StartRequest, node: &NodeContext) -> Result<(), Waiting> {
    let (pod, container, restart_count, node) = (
        Arc::clone(&request.pod),
        request.container.clone(),
        request.restart_count,
        node.clone(),
    );
    tokio::task::spawn_blocking(move || -> Result<(), String> {
        spec::prepare_container_log_dir(&pod, &container.name, &node).map_err(|e| e.to_string())?;
        spec::prepare_termination_log(&pod, &container, restart_count, &node)
            .map_err(|e| e.to_string())?;
        Ok(())
    })
    .await
    .map_err(|e| {
        waiting(
            "CreateContainerConfigError",
            format!("preparing files did not finish: {e}"),
        )
    })?
    .map_err(|e| waiting("CreateContainerConfigError", e))
}

async fn ensure_image(
    port: &RuntimePort,
    pulls: &mut Backoff,
    image: &str,
    request: &StartRequest,
) -> Result<(), Waiting> {
    let policy = request
        .container
        .image_pull_policy
        .as_deref()
        .unwrap_or("IfNotPresent");
    let present = port
        .call(cri::ImageStatusRequest {
            image: Some(image_spec(image)),
            verbose: false,
        })
        .await
        .map(|answer| answer.image.is_some())
        .unwrap_or(false);
    match (policy, present) {
        ("Never", false) => {
            return Err(waiting(
                "ErrImageNeverPull",
                format!("Container image \"{image}\" is not present with pull policy of Never"),
            ))
        }
        ("Never" | "IfNotPresent", true) => return Ok(()),
        _ => {}
    }
    let now = Instant::now();
    if pulls.check(image, now).is_err() {
        return Err(waiting(
            "ImagePullBackOff",
            format!("Back-off pulling image \"{image}\""),
        ));
    }
    let started = Instant::now();
    match port
        .call(cri::PullImageRequest {
            image: Some(image_spec(image)),
            auth: None,
            sandbox_config: Some(request.sandbox_config.clone()),
        })
        .await
    {
        Ok(_) => {
            metrics::histogram!("kubelet_image_pull_duration_seconds")
                .record(started.elapsed().as_secs_f64());
            Ok(())
        }
        Err(err) => {
            pulls.restarted(image, std::time::Duration::ZERO, now, PULL_BACKOFF);
            Err(waiting("ErrImagePull", err.to_string()))
        }
    }
}

fn image_spec(image: &str) -> cri::ImageSpec {
    cri::ImageSpec {
        image: image.to_owned(),
        ..Default::default()
    }
}
