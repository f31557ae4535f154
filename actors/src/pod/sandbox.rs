//! What a pod's sandbox needs from outside the runtime: [`PodSetup::prepare`] plans the pod's
//! volumes and reads the API objects they and the environment name, once per sync;
//! [`PodSetup::create_sandbox`] makes a new sandbox with its cgroup and volumes;
//! [`PodSetup::refresh_volumes`] brings the API-backed volumes of a running pod up to date;
//! [`existing_sandbox`] is the ready sandbox new containers go into.

use std::collections::BTreeMap;
use std::sync::Arc;

use sergeant_messages::runtime::cri;

use super::error::{PodError, Stopped};
use super::file_work::run_file_work;
use super::sync::SyncInput;
use super::volume_events::record_volume_failure;
use crate::events::{pod_event, reason, EventType};
use sergeant_core::runtime::PodRuntime;
use sergeant_core::runtime_class::{self, RuntimeClassError};
use sergeant_core::spec::{self, PodObjects};
use sergeant_core::status::container_pod_ips;
use sergeant_core::volumes::{self, Payload, VolumeError, VolumePlan};
use sergeant_kube_api::fetch_pod_objects;

/// What one sync knows of the pod beyond the runtime: its volume plan, the API objects it
/// names, and the volume contents computed from them.
pub(super) struct PodSetup {
    /// The pod's volumes.
    pub(super) plan: VolumePlan,
    /// The config maps, secrets and tokens its volumes and environment read.
    pub(super) objects: Arc<PodObjects>,
    /// The contents of its API-backed volumes.
    payloads: BTreeMap<String, Payload>,
    /// The API-backed volumes whose contents could not be computed.
    failures: Vec<VolumeError>,
}

/// A ready sandbox containers can be started in.
pub(super) struct SandboxTarget {
    /// Its runtime ID.
    pub(super) id: String,
    /// Its configuration (the runtime wants it again to create containers).
    pub(super) config: cri::PodSandboxConfig,
    /// Its IPs, primary first.
    pub(super) pod_ips: Vec<String>,
}

impl PodSetup {
    /// Plans the pod's volumes and fetches (in managed mode) what they and the environment
    /// read, renewing the pod's tokens on the way.
    ///
    /// # Errors
    /// A volume the pod's spec makes unusable.
    pub(super) async fn prepare(input: &mut SyncInput) -> Result<Self, PodError> {
        let plan = VolumePlan::for_pod(&input.pod, &input.node)?;
        let objects = Arc::new(match (&input.api, &input.objects) {
            (Some(client), Some(user)) => {
                fetch_pod_objects(client, user, &input.pod, &mut input.tokens).await
            }
            _ => PodObjects::default(),
        });
        let (payloads, failures) = volumes::api_payloads(&plan, &input.pod, &input.node, &objects);
        Ok(Self {
            plan,
            objects,
            payloads,
            failures,
        })
    }

    /// Brings the API-backed volumes of a running pod up to date. A volume that cannot be
    /// updated keeps its content, as upstream: the failure is a `FailedMount` event and a log
    /// line, and the pod goes on. File work in the pod's own directory, run on the caller's
    /// thread (see [`super::file_work`]).
    pub(super) fn refresh_volumes(&self) {
        let more = sergeant_host::volumes::refresh_api_volumes(&self.plan, &self.payloads);
        let failed: Vec<VolumeError> = self.failures.iter().cloned().chain(more).collect();
        if !failed.is_empty() {
            let failed = volume_failures(failed);
            tracing::warn!("volumes not updated: {failed}");
        }
    }

    /// Replaces the pod's sandboxes (`old`) with a fresh one, its `attempt`-th: the old ones
    /// stopped, then its configuration, cgroup and volumes prepared as one piece of file work
    /// ([`VolumePlan::reach`] tells its thread), then run. Volumes whose contents could not be
    /// computed stop it first, each a `FailedMount` event.
    ///
    /// # Errors
    /// The interrupt; or a failed volume, a runtime failure, an invalid sandbox configuration,
    /// a cgroup that cannot be set up, or a new sandbox that is not ready.
    pub(super) async fn create_sandbox(
        &self,
        input: &SyncInput,
        old: &[cri::PodSandbox],
        attempt: u32,
    ) -> Result<SandboxTarget, Stopped> {
        if !self.failures.is_empty() {
            return Err(volume_failures(self.failures.clone()).into());
        }
        let runtime_handler = runtime_handler(input).await?;
        for sandbox in old {
            input.interrupt.check()?;
            input
                .port
                .call(cri::StopPodSandboxRequest {
                    pod_sandbox_id: sandbox.id.clone(),
                })
                .await?;
        }
        let cgroup = input
            .node
            .has_cgroups()
            .then(|| spec::pod_cgroup_parent(&input.pod, &input.node));
        let pids_limit = input.node.pod_pids_limit;
        let (pod, node, plan, payloads) = (
            Arc::clone(&input.pod),
            Arc::clone(&input.node),
            self.plan.clone(),
            self.payloads.clone(),
        );
        let config = run_file_work(
            self.plan.reach(),
            "sandbox setup",
            move || -> Result<_, PodError> {
                let resolv_conf = sergeant_host::dns::read_resolv_conf(&node);
                let config = spec::sandbox_config(&pod, &node, attempt, resolv_conf.as_deref())?;
                if let Some(cgroup) = &cgroup {
                    sergeant_host::cgroup::ensure_pod_cgroup(cgroup, pids_limit)?;
                    if node.cgroups_per_qos {
                        let limits = spec::pod_cgroup_resources(&pod);
                        sergeant_host::cgroup::set_pod_cgroup_resources(cgroup, &limits)?;
                    }
                }
                sergeant_host::volumes::setup_volumes(&plan, &payloads)
                    .map_err(|e| PodError::Volumes(vec![e]))?;
                Ok(config)
            },
        )
        .await
        .map_err(PodError::Unfinished)?
        // Reported here, in the pod's scope: the blocking pool has none.
        .map_err(|error| match error {
            PodError::Volumes(failed) => volume_failures(failed),
            other => other,
        })?;
        input.interrupt.check()?;
        let id = input
            .port
            .call(cri::RunPodSandboxRequest {
                config: Some(config.clone()),
                runtime_handler,
            })
            .await?
            .pod_sandbox_id;
        let status = input
            .port
            .call(cri::PodSandboxStatusRequest {
                pod_sandbox_id: id.clone(),
                verbose: false,
            })
            .await?
            .status
            .filter(|s| s.state == cri::PodSandboxState::SandboxReady as i32)
            .ok_or_else(|| PodError::SandboxNotReady(id.clone()))?;
        Ok(SandboxTarget {
            id,
            config,
            pod_ips: container_pod_ips(input.pod.spec.as_ref(), Some(&status), input.node.node_ip),
        })
    }
}

/// The runtime handler of the RuntimeClass the pod names (empty for the default), resolved
/// through the API server's RuntimeClasses; a name that cannot be resolved is a
/// `FailedCreatePodSandBox` event, as upstream, and no sandbox.
///
/// # Errors
/// The RuntimeClass does not exist, is not listed yet, or the node is standalone.
async fn runtime_handler(input: &SyncInput) -> Result<String, PodError> {
    let Some(name) = runtime_class::requested(&input.pod) else {
        return Ok(String::new());
    };
    let resolved = match &input.objects {
        Some(user) => user.runtime_handler(name).await,
        None => Err(RuntimeClassError::Standalone(name.to_owned())),
    };
    resolved.map_err(|error| {
        pod_event(
            EventType::Warning,
            reason::FAILED_CREATE_POD_SANDBOX,
            format!("Failed to create pod sandbox: {error}"),
        );
        error.into()
    })
}

/// The ready sandbox `sandbox_id` of `runtime`, with the configuration it was made from.
///
/// # Errors
/// The pod's sandbox configuration cannot be built (see [`spec::sandbox_config`]).
pub(super) fn existing_sandbox(
    input: &SyncInput,
    runtime: &PodRuntime,
    sandbox_id: &str,
) -> Result<SandboxTarget, PodError> {
    let attempt = runtime
        .sandboxes
        .iter()
        .find(|s| s.id == sandbox_id)
        .and_then(|s| s.metadata.as_ref())
        .map_or(0, |m| m.attempt);
    let resolv_conf = sergeant_host::dns::read_resolv_conf(&input.node);
    let config = spec::sandbox_config(&input.pod, &input.node, attempt, resolv_conf.as_deref())?;
    let status = runtime
        .sandbox_status
        .as_ref()
        .filter(|s| s.id == sandbox_id);
    let pod_ips = container_pod_ips(input.pod.spec.as_ref(), status, input.node.node_ip);
    Ok(SandboxTarget {
        id: sandbox_id.to_owned(),
        config,
        pod_ips,
    })
}

/// Reports each volume failure (a `FailedMount` event, counted); the error naming them all.
fn volume_failures(failures: Vec<VolumeError>) -> PodError {
    for failure in &failures {
        record_volume_failure(failure);
    }
    PodError::Volumes(failures)
}
