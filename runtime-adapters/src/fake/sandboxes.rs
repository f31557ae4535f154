//! Pod sandboxes of the fake runtime: run, stop, remove, status and list, with containerd's
//! rules (unique metadata names, `NotFound` for unknown ids, idempotent removes).

use std::collections::HashMap;
use std::net::Ipv4Addr;

use sergeant_messages::runtime::{cri, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::errors::{already_exists, exhausted, invalid_argument, not_found};
use super::events::Kind;
use super::ipam::Ipv4Network;
use super::labels;
use super::FakeRuntime;

/// One sandbox: only what its status and list entries report.
#[derive(Debug)]
pub(super) struct Sandbox {
    metadata: cri::PodSandboxMetadata,
    pub(super) ready: bool,
    created_at: i64,
    /// The pod IP; `None` for a sandbox in the node's network namespace.
    ip: Option<Ipv4Addr>,
    namespaces: cri::NamespaceOption,
    labels: HashMap<String, String>,
    annotations: HashMap<String, String>,
    runtime_handler: String,
    /// Whether its config has a Windows half: a Windows pod, whose stats are Windows-shaped.
    pub(super) windows: bool,
}

impl Sandbox {
    /// The CRI state value.
    fn state(&self) -> i32 {
        if self.ready {
            cri::PodSandboxState::SandboxReady as i32
        } else {
            cri::PodSandboxState::SandboxNotready as i32
        }
    }

    /// Whether the sandbox passes a `ListPodSandbox` filter.
    pub(super) fn passes(&self, id: &str, filter: &cri::PodSandboxFilter) -> bool {
        (filter.id.is_empty() || filter.id == id)
            && filter
                .state
                .as_ref()
                .is_none_or(|wanted| wanted.state == self.state())
            && labels::matches(&self.labels, &filter.label_selector)
    }

    /// The `PodSandboxStatus` answer: state, times, network and namespaces.
    pub(super) fn status(&self, id: &str) -> cri::PodSandboxStatus {
        cri::PodSandboxStatus {
            id: id.to_owned(),
            metadata: Some(self.metadata.clone()),
            state: self.state(),
            created_at: self.created_at,
            network: Some(cri::PodSandboxNetworkStatus {
                ip: self.ip.map(|ip| ip.to_string()).unwrap_or_default(),
                additional_ips: Vec::new(),
            }),
            linux: Some(cri::LinuxPodSandboxStatus {
                namespaces: Some(cri::Namespace {
                    options: Some(self.namespaces.clone()),
                }),
            }),
            labels: self.labels.clone(),
            annotations: self.annotations.clone(),
            runtime_handler: self.runtime_handler.clone(),
        }
    }

    /// The attributes its stats carry.
    pub(super) fn attributes(&self, id: &str) -> cri::PodSandboxAttributes {
        cri::PodSandboxAttributes {
            id: id.to_owned(),
            metadata: Some(self.metadata.clone()),
            labels: self.labels.clone(),
            annotations: self.annotations.clone(),
        }
    }

    /// The `ListPodSandbox` entry.
    fn entry(&self, id: &str) -> cri::PodSandbox {
        cri::PodSandbox {
            id: id.to_string(),
            metadata: Some(self.metadata.clone()),
            state: self.state(),
            created_at: self.created_at,
            labels: self.labels.clone(),
            annotations: self.annotations.clone(),
            runtime_handler: self.runtime_handler.clone(),
        }
    }
}

/// The namespace options the sandbox config asks for (all `POD` when it names none).
fn namespace_options(config: &cri::PodSandboxConfig) -> cri::NamespaceOption {
    config
        .linux
        .as_ref()
        .and_then(|linux| linux.security_context.as_ref())
        .and_then(|context| context.namespace_options.clone())
        .unwrap_or_default()
}

/// The sandbox metadata, checked to name a pod (name, namespace and uid all set).
fn checked_metadata(
    operation: &'static str,
    config: &mut cri::PodSandboxConfig,
) -> Result<cri::PodSandboxMetadata, RuntimeError> {
    let metadata = config
        .metadata
        .take()
        .ok_or_else(|| invalid_argument(operation, "sandbox config must include metadata"))?;
    for (field, value) in [
        ("name", &metadata.name),
        ("namespace", &metadata.namespace),
        ("uid", &metadata.uid),
    ] {
        if value.is_empty() {
            return Err(invalid_argument(
                operation,
                format!("sandbox config metadata.{field} must not be empty"),
            ));
        }
    }
    Ok(metadata)
}

impl FakeRuntime {
    /// `RunPodSandbox`: a READY sandbox with a fresh IP (none in the node's network).
    pub(super) fn run_pod_sandbox(
        &mut self,
        request: cri::RunPodSandboxRequest,
    ) -> Result<cri::RunPodSandboxResponse, RuntimeError> {
        let operation = cri::RunPodSandboxRequest::OPERATION;
        let mut config = request
            .config
            .ok_or_else(|| invalid_argument(operation, "sandbox config is required"))?;
        let metadata = checked_metadata(operation, &mut config)?;
        if self
            .sandboxes
            .values()
            .any(|sandbox| sandbox.metadata == metadata)
        {
            return Err(already_exists(
                operation,
                format!(
                    "sandbox name \"{}_{}_{}_{}\"",
                    metadata.name, metadata.namespace, metadata.uid, metadata.attempt
                ),
            ));
        }
        let namespaces = namespace_options(&config);
        let ip =
            if namespaces.network == cri::NamespaceMode::Node as i32 {
                None
            } else {
                let ip = self.ips.allocate();
                let network = self.ips.network();
                Some(ip.ok_or_else(|| {
                    exhausted(operation, format!("no free pod IP left in {network}"))
                })?)
            };
        let id = self.ids.next_id();
        let sandbox = Sandbox {
            metadata,
            ready: true,
            created_at: self.clock.now_ns(),
            ip,
            namespaces,
            labels: config.labels,
            annotations: config.annotations,
            runtime_handler: request.runtime_handler,
            windows: config.windows.is_some(),
        };
        self.sandboxes.insert(id.clone(), sandbox);
        self.emit(Kind::ContainerCreatedEvent, &id, &id);
        self.emit(Kind::ContainerStartedEvent, &id, &id);
        Ok(cri::RunPodSandboxResponse { pod_sandbox_id: id })
    }

    /// `StopPodSandbox`: NOTREADY, its running containers killed; stopping twice is fine.
    pub(super) fn stop_pod_sandbox(
        &mut self,
        request: &cri::StopPodSandboxRequest,
    ) -> Result<cri::StopPodSandboxResponse, RuntimeError> {
        let id = &request.pod_sandbox_id;
        let sandbox = self.sandboxes.get_mut(id).ok_or_else(|| {
            not_found(
                cri::StopPodSandboxRequest::OPERATION,
                format!("sandbox {id:?}"),
            )
        })?;
        let was_ready = std::mem::replace(&mut sandbox.ready, false);
        self.kill_containers_in(id);
        if was_ready {
            self.emit(Kind::ContainerStoppedEvent, id, id);
        }
        Ok(cri::StopPodSandboxResponse {})
    }

    /// `RemovePodSandbox`: the sandbox, its containers and its IP are gone; removing an
    /// unknown sandbox succeeds.
    pub(super) fn remove_pod_sandbox(
        &mut self,
        request: &cri::RemovePodSandboxRequest,
    ) -> cri::RemovePodSandboxResponse {
        let id = &request.pod_sandbox_id;
        if !self.sandboxes.contains_key(id) {
            return cri::RemovePodSandboxResponse {};
        }
        let inside: Vec<String> = self
            .containers
            .iter()
            .filter(|(_, container)| container.sandbox_id == *id)
            .map(|(container_id, _)| container_id.clone())
            .collect();
        for container_id in inside {
            self.containers.remove(&container_id);
            self.emit(Kind::ContainerDeletedEvent, &container_id, id);
        }
        // Emitted while the sandbox is still there, so the event carries its last status.
        self.emit(Kind::ContainerDeletedEvent, id, id);
        if let Some(ip) = self.sandboxes.remove(id).and_then(|sandbox| sandbox.ip) {
            self.ips.release(ip);
        }
        cri::RemovePodSandboxResponse {}
    }

    /// `PodSandboxStatus`: state, times, network and namespaces of one sandbox.
    pub(super) fn pod_sandbox_status(
        &mut self,
        request: &cri::PodSandboxStatusRequest,
    ) -> Result<cri::PodSandboxStatusResponse, RuntimeError> {
        let id = &request.pod_sandbox_id;
        let sandbox = self.sandboxes.get(id).ok_or_else(|| {
            not_found(
                cri::PodSandboxStatusRequest::OPERATION,
                format!("sandbox {id:?}"),
            )
        })?;
        let status = sandbox.status(id);
        Ok(cri::PodSandboxStatusResponse {
            status: Some(status),
            timestamp: self.clock.now_ns(),
            ..Default::default()
        })
    }

    /// `ListPodSandbox`: the sandboxes passing the filter.
    pub(super) fn list_pod_sandbox(
        &self,
        request: &cri::ListPodSandboxRequest,
    ) -> cri::ListPodSandboxResponse {
        let everything = cri::PodSandboxFilter::default();
        let filter = request.filter.as_ref().unwrap_or(&everything);
        let items = self
            .sandboxes
            .iter()
            .filter(|(id, sandbox)| sandbox.passes(id, filter))
            .map(|(id, sandbox)| sandbox.entry(id))
            .collect();
        cri::ListPodSandboxResponse { items }
    }

    /// `UpdateRuntimeConfig`: new pod IPs come from the node's pod CIDR (its first IPv4
    /// range) from now on; an empty CIDR changes nothing, as with containerd.
    pub(super) fn update_runtime_config(
        &mut self,
        rq: &cri::UpdateRuntimeConfigRequest,
    ) -> Result<cri::UpdateRuntimeConfigResponse, RuntimeError> {
        let operation = cri::UpdateRuntimeConfigRequest::OPERATION;
        let pod_cidr = rq
            .runtime_config
            .as_ref()
            .and_then(|c| c.network_config.as_ref())
            .map_or("", |n| n.pod_cidr.as_str());
        if !pod_cidr.is_empty() {
            let network =
                Ipv4Network::first_of(pod_cidr).map_err(|err| invalid_argument(operation, err))?;
            self.ips.set_network(network);
        }
        Ok(cri::UpdateRuntimeConfigResponse {})
    }
}
