//! Starting one container: its image per pull policy (with pull back-off), then its subPath
//! mounts bound on the node, then create and start through the runtime, then its postStart
//! hook; abandoned between steps once the pod is being stopped (see [`super::interrupt`]).

use std::sync::Arc;
use std::time::Instant;

use sergeant_messages::pods::core::{Container, Pod};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use super::credentials;
use super::file_work::{run_file_work, Unfinished};
use super::hooks::{self, HookError};
use super::interrupt::{Interrupt, Interrupted};
use super::volume_events::record_subpath_refusal;
use crate::events::EventType::{Normal, Warning};
use crate::events::{container_event, go_millis, reason};
use crate::runtime::RuntimePort;
use sergeant_core::backoff::{Backoff, BackoffPolicy};
use sergeant_core::kind::ContainerKind;
use sergeant_core::spec::{self, ImageUser, NodeContext, NodeImage, SpecError};
use sergeant_core::status::Waiting;
use sergeant_core::volumes::{self, SubPathError, SubPathMount, VolumePlan};

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
    /// Init, sidecar, regular or ephemeral.
    pub kind: ContainerKind,
    /// The sandbox it joins.
    pub sandbox_id: String,
    /// That sandbox's configuration (runtimes want it again on create and pull).
    pub sandbox_config: cri::PodSandboxConfig,
    /// How many times it was restarted before.
    pub restart_count: u32,
    /// The runtime ID of the container whose process namespace it joins (an ephemeral
    /// container's target), as the plan found it.
    pub pid_target: Option<String>,
    /// The sandbox's IPs, primary first: `status.podIP` references in the environment read the
    /// first, the managed `/etc/hosts` maps all of them to the pod's name.
    pub pod_ips: Vec<String>,
    /// The config maps and secrets the environment reads, fetched by the sync.
    pub objects: Arc<spec::PodObjects>,
}

/// Why a container was not started; each kind is the waiting reason its status gives, as
/// upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotStarted {
    /// Its image is not on the node and cannot be had now: `reason` is `ErrImagePull`,
    /// `ImagePullBackOff` or `ErrImageNeverPull`.
    #[error("{message}")]
    Image {
        /// The waiting reason.
        reason: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Its configuration cannot be made — a field of its spec, a refused subPath, its files on
    /// the node: `CreateContainerConfigError`.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The runtime did not create it: `CreateContainerError`.
    #[error(transparent)]
    Create(RuntimeError),
    /// The runtime did not start it: `RunContainerError`.
    #[error(transparent)]
    Run(RuntimeError),
    /// Its postStart hook failed and it was stopped: `PostStartHookError`.
    #[error(transparent)]
    PostStartHook(HookError),
    /// The pod is being stopped: the start was abandoned between two steps.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

/// Why a container's configuration could not be made (`CreateContainerConfigError`): the
/// start's own failures that are the container's, not the runtime's. Its Display is the
/// container's waiting message; `Clone` and comparable, as [`NotStarted`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A field of its spec, its image's user, or its files on the node.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// One of its subPath mounts was refused.
    #[error(transparent)]
    SubPath(#[from] SubPathError),
    /// Binding its subPaths on the blocking pool did not finish.
    #[error(transparent)]
    Unfinished(#[from] Unfinished),
}

impl NotStarted {
    /// The waiting reason of the container's status; `None` for an interrupted start.
    #[must_use]
    pub fn reason(&self) -> Option<&'static str> {
        Some(match self {
            Self::Image { reason, .. } => reason,
            Self::Config(_) => "CreateContainerConfigError",
            Self::Create(_) => "CreateContainerError",
            Self::Run(_) => "RunContainerError",
            Self::PostStartHook(_) => "PostStartHookError",
            Self::Interrupted(_) => return None,
        })
    }

    /// The runtime's failure when the runtime is out (unreachable, or past its deadline): the
    /// container is not at fault then, and the pod's other starts would fail alike.
    #[must_use]
    pub fn outage(&self) -> Option<&RuntimeError> {
        match self {
            Self::Create(e) | Self::Run(e) if e.is_transient() => Some(e),
            _ => None,
        }
    }

    /// Reports the failure of `container` as upstream's `Failed` event — the image errors by
    /// their reason, the others by their message, and a failed hook not at all (its output may
    /// hold secrets; it has its own event) — and returns why it waits. `None` for an
    /// interrupted start.
    #[must_use]
    pub fn report(&self, container: &str) -> Option<Waiting> {
        let why = self.reason()?;
        let message = self.to_string();
        let text = match self {
            Self::Image { .. } => Some(why),
            Self::PostStartHook(_) => None,
            _ => Some(message.as_str()),
        };
        if let Some(text) = text {
            container_event(container, Warning, reason::FAILED, format!("Error: {text}"));
        }
        Some(Waiting {
            reason: why.to_owned(),
            message,
        })
    }
}

/// Pulls (per policy), creates and starts the container, then runs its postStart hook; each
/// step is an event of the pod's scope, as upstream reports it. Returns the container's ID.
/// Once `interrupt` is raised no further step is taken: a pull or hook under way is no longer
/// waited for, and nothing is created or started.
///
/// # Errors
/// Why the container is not started ([`NotStarted`]: its waiting reason, or the interrupt).
pub async fn start_container(
    port: &RuntimePort,
    node: &NodeContext,
    plan: &VolumePlan,
    pulls: &mut Backoff,
    interrupt: &Interrupt,
    request: StartRequest,
) -> Result<String, NotStarted> {
    let name = request.container.name.as_str();
    let image = request.container.image.clone().unwrap_or_default();
    // The node-side files are written while the runtime looks up the image: `join!` polls the
    // lookup first, so its request is on its way while the files are written.
    let image = interrupt.unless(ensure_image(port, pulls, &image, &request));
    let (image, files) = futures::join!(image, async { prepare_files(&request, node) });
    let image = image??;
    files.map_err(ConfigError::from)?;
    spec::check_image_user(&request.pod, &request.container, request.kind, &image.user)
        .map_err(ConfigError::from)?;
    let mut setup = spec::container_config(
        &request.pod,
        &request.container,
        request.kind,
        request.restart_count,
        node,
        plan,
        request.pod_ips.first().map(String::as_str),
        &request.objects,
        &image,
    )
    .map_err(ConfigError::from)?;
    if let Some(target) = &request.pid_target {
        spec::join_target_pid_namespace(&mut setup.config, target);
    }
    bind_sub_paths(setup.sub_paths).await?;
    interrupt.check()?;
    let created = port
        .call(cri::CreateContainerRequest {
            pod_sandbox_id: request.sandbox_id.clone(),
            config: Some(setup.config),
            sandbox_config: Some(request.sandbox_config.clone()),
        })
        .await
        .map_err(NotStarted::Create)?;
    let container_id = created.container_id;
    container_event(
        name,
        Normal,
        reason::CREATED,
        format!("Created container: {name}"),
    );
    interrupt.check()?;
    port.call(cri::StartContainerRequest {
        container_id: container_id.clone(),
    })
    .await
    .map_err(NotStarted::Run)?;
    tracing::info!(container = name, id = container_id, "container started");
    container_event(
        name,
        Normal,
        reason::STARTED,
        format!("Started container {name}"),
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
            pod_ip: request.pod_ips.first().map(String::as_str),
        };
        let hook = hooks::run(port, &target, handler, hooks::DEFAULT_HOOK_TIMEOUT);
        if let Err(error) = interrupt.unless(hook).await? {
            let failed = "PostStartHook failed".to_owned();
            container_event(name, Warning, reason::FAILED_POST_START_HOOK, failed);
            let killing = "FailedPostStartHook".to_owned();
            container_event(name, Normal, reason::KILLING, killing);
            let _ = port
                .call(cri::StopContainerRequest {
                    container_id,
                    timeout: 0,
                })
                .await;
            return Err(NotStarted::PostStartHook(error));
        }
    }
    Ok(container_id)
}

/// Creates the container's log directory and termination-message file on the node, and
/// brings the pod's managed `/etc/hosts` up to date with the sandbox's IPs (the sandbox exists:
/// its IPs are known). Blocking I/O in places sergeant owns, run on the caller's thread (see
/// [`super::file_work`]).
///
/// # Errors
/// What could not be written, to be reported once the image is known to be there.
fn prepare_files(request: &StartRequest, node: &NodeContext) -> Result<(), SpecError> {
    let (pod, container) = (&request.pod, &request.container);
    sergeant_host::pod_files::prepare_container_log_dir(pod, &container.name, node)?;
    sergeant_host::pod_files::prepare_termination_log(pod, container, request.restart_count, node)?;
    sergeant_host::pod_files::prepare_hosts_file(pod, &request.pod_ips, node)?;
    Ok(())
}

/// Binds the container's subPath mounts on the node (see [`volumes::prepare_sub_paths`]), on
/// the thread their reach calls for: the pod actor's own, or the blocking pool when one is on
/// a hostPath volume. Nothing to do, and no file work, for a container without subPaths.
///
/// # Errors
/// [`ConfigError::SubPath`]: the refused subPath (logged and counted), naming pod, field and
/// reason; [`ConfigError::Unfinished`] when the binds on the blocking pool did not finish.
async fn bind_sub_paths(mounts: Vec<SubPathMount>) -> Result<(), ConfigError> {
    if mounts.is_empty() {
        return Ok(());
    }
    let reach = volumes::sub_paths_reach(&mounts);
    run_file_work(reach, "subPath preparation", move || {
        sergeant_host::volumes::prepare_sub_paths(&mounts)
    })
    .await?
    .map_err(|refused| {
        // Here, in the pod's span: the blocking pool has none.
        record_subpath_refusal(&refused);
        refused.into()
    })
}

/// The image on the node per pull policy; returns its ID (the container is created from it)
/// and the user it runs as (for `runAsNonRoot`).
async fn ensure_image(
    port: &RuntimePort,
    pulls: &mut Backoff,
    image: &str,
    request: &StartRequest,
) -> Result<NodeImage, NotStarted> {
    let policy = request
        .container
        .image_pull_policy
        .as_deref()
        .unwrap_or("IfNotPresent");
    let spec = spec::image_spec(&request.pod, image);
    let present = image_facts(port, &spec).await;
    let name = request.container.name.as_str();
    match (policy, present) {
        ("Never", None) => {
            let message =
                format!("Container image \"{image}\" is not present with pull policy of Never");
            container_event(name, Warning, reason::ERR_IMAGE_NEVER_PULL, message.clone());
            return Err(image_error("ErrImageNeverPull", message));
        }
        ("Never" | "IfNotPresent", Some((_, found))) => {
            let message = format!("Container image \"{image}\" already present on machine");
            container_event(name, Normal, reason::PULLED, message);
            return Ok(found);
        }
        _ => {}
    }
    let now = Instant::now();
    if pulls.check(image, now).is_err() {
        let message = format!("Back-off pulling image \"{image}\"");
        container_event(name, Normal, reason::BACK_OFF, message.clone());
        return Err(image_error("ImagePullBackOff", message));
    }
    container_event(
        name,
        Normal,
        reason::PULLING,
        format!("Pulling image \"{image}\""),
    );
    let started = Instant::now();
    match credentials::pull_image(
        port,
        &spec,
        &request.sandbox_config,
        &request.pod,
        &request.objects,
    )
    .await
    {
        Ok(pulled) => {
            let pulled_in = started.elapsed();
            metrics::histogram!("kubelet_image_pull_duration_seconds")
                .record(pulled_in.as_secs_f64());
            let (size, user) = image_facts(port, &spec)
                .await
                .map_or((0, ImageUser::of(None, "")), |(size, found)| {
                    (size, found.user)
                });
            let message = format!(
                "Successfully pulled image \"{image}\" in {} ({} including waiting). Image size: {size} bytes.",
                go_millis(pulled_in),
                go_millis(now.elapsed()),
            );
            container_event(name, Normal, reason::PULLED, message);
            // The reference the pull answered, as upstream creates the container from it; a
            // runtime that answers none gets the image as the container names it.
            let id = Some(pulled.image_ref)
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| image.to_owned());
            Ok(NodeImage { id, user })
        }
        Err(err) => {
            pulls.failed(image, now, PULL_BACKOFF);
            let message = format!("Failed to pull image \"{image}\": {err}");
            container_event(name, Warning, reason::FAILED, message);
            Err(image_error("ErrImagePull", err.to_string()))
        }
    }
}

fn image_error(reason: &'static str, message: String) -> NotStarted {
    NotStarted::Image { reason, message }
}

/// The size of the image, its ID and the user it runs as; `None` when the runtime does not have
/// it (or cannot say: the pull policy then decides), or gives no ID for it (upstream's kubelet
/// takes an image without one for absent).
async fn image_facts(port: &RuntimePort, image: &cri::ImageSpec) -> Option<(u64, NodeImage)> {
    let found = port
        .call(cri::ImageStatusRequest {
            image: Some(image.clone()),
            verbose: false,
        })
        .await
        .ok()?
        .image
        .filter(|found| !found.id.is_empty())?;
    let user = ImageUser::of(found.uid.map(|uid| uid.value), &found.username);
    Some((found.size, NodeImage { id: found.id, user }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_is_its_upstream_waiting_reason_and_only_an_outage_is_the_runtimes() {
        let outage = RuntimeError::Unavailable {
            operation: "create_container",
            message: "connection refused".to_owned(),
        };
        let refused = RuntimeError::InvalidArgument {
            operation: "start_container",
            message: "no such file".to_owned(),
        };
        let image = NotStarted::Image {
            reason: "ImagePullBackOff",
            message: "Back-off pulling image \"x\"".to_owned(),
        };
        let cases = [
            (image, Some("ImagePullBackOff"), false),
            (
                NotStarted::Config(
                    SpecError::field("ns/web", "spec.containers[0].env", "bad").into(),
                ),
                Some("CreateContainerConfigError"),
                false,
            ),
            (
                NotStarted::Create(outage.clone()),
                Some("CreateContainerError"),
                true,
            ),
            (NotStarted::Run(refused), Some("RunContainerError"), false),
            (
                NotStarted::PostStartHook(HookError::NoHandler),
                Some("PostStartHookError"),
                false,
            ),
            (NotStarted::Interrupted(Interrupted), None, false),
        ];
        for (failure, reason, is_outage) in cases {
            assert_eq!(failure.reason(), reason, "{failure:?}");
            assert_eq!(failure.outage().is_some(), is_outage, "{failure:?}");
        }
        assert_eq!(
            NotStarted::Create(outage.clone()).to_string(),
            outage.to_string(),
            "the runtime's words are the message"
        );
    }
}
