//! Runtime operation metrics, under the upstream kubelet's names and labels.
//!
//! Dashboards and alerts written for the upstream kubelet read
//! `kubelet_runtime_operations_total`, `kubelet_runtime_operations_errors_total` and
//! `kubelet_runtime_operations_duration_seconds`, each labelled with `operation_type`; every
//! CRI call records them here, through the `metrics` facade, whatever recorder the binary
//! installs.

use std::time::Duration;

/// Counter of CRI calls, by `operation_type`.
pub const OPERATIONS_TOTAL: &str = "kubelet_runtime_operations_total";
/// Counter of failed CRI calls, by `operation_type`.
pub const OPERATIONS_ERRORS_TOTAL: &str = "kubelet_runtime_operations_errors_total";
/// Histogram of CRI call durations in seconds, by `operation_type`.
pub const OPERATIONS_DURATION_SECONDS: &str = "kubelet_runtime_operations_duration_seconds";
/// The label every runtime operation metric carries.
pub const OPERATION_TYPE_LABEL: &str = "operation_type";

/// One kind of CRI call, as the metrics and errors name it.
///
/// Exists so the label values are a closed set spelled once (the upstream `operation_type`
/// strings). Which request is which operation, and its deadline class, is the CRI client's
/// table of RPCs ([`super::Rpc`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `Version`.
    Version,
    /// `Status`.
    Status,
    /// `RunPodSandbox`.
    RunPodSandbox,
    /// `StopPodSandbox`.
    StopPodSandbox,
    /// `RemovePodSandbox`.
    RemovePodSandbox,
    /// `PodSandboxStatus`.
    PodSandboxStatus,
    /// `ListPodSandbox`.
    ListPodSandbox,
    /// `CreateContainer`.
    CreateContainer,
    /// `StartContainer`.
    StartContainer,
    /// `StopContainer`.
    StopContainer,
    /// `RemoveContainer`.
    RemoveContainer,
    /// `UpdateContainerResources` (an in-place resize).
    UpdateContainerResources,
    /// `ContainerStatus`.
    ContainerStatus,
    /// `ListContainers`.
    ListContainers,
    /// `ExecSync`.
    ExecSync,
    /// `PullImage`.
    PullImage,
    /// `ImageStatus`.
    ImageStatus,
    /// `ListImages`.
    ListImages,
    /// `RemoveImage`.
    RemoveImage,
    /// `ReopenContainerLog` (after the log file was rotated).
    ReopenContainerLog,
    /// `Exec`: a streaming URL for an interactive command.
    Exec,
    /// `Attach`: a streaming URL for a container's own streams.
    Attach,
    /// `PortForward`: a streaming URL for the pod's ports.
    PortForward,
    /// `ListContainerStats`: the containers' resource usage, for `/stats/summary`.
    ListContainerStats,
    /// `ListPodSandboxStats`: the pods' resource usage, for `/stats/summary` on Windows.
    ListPodSandboxStats,
    /// `ImageFsInfo`: the image filesystem's usage, for `/stats/summary`.
    ImageFsInfo,
    /// `UpdateRuntimeConfig`: the node's pod CIDR, handed to the runtime.
    UpdateRuntimeConfig,
    /// `GetContainerEvents` (a server stream).
    GetContainerEvents,
}

impl Operation {
    /// Every operation, for describing or pre-registering the metric series.
    pub const ALL: [Operation; 28] = [
        Self::Version,
        Self::Status,
        Self::RunPodSandbox,
        Self::StopPodSandbox,
        Self::RemovePodSandbox,
        Self::PodSandboxStatus,
        Self::ListPodSandbox,
        Self::CreateContainer,
        Self::StartContainer,
        Self::StopContainer,
        Self::RemoveContainer,
        Self::UpdateContainerResources,
        Self::ContainerStatus,
        Self::ListContainers,
        Self::ExecSync,
        Self::PullImage,
        Self::ImageStatus,
        Self::ListImages,
        Self::RemoveImage,
        Self::ReopenContainerLog,
        Self::Exec,
        Self::Attach,
        Self::PortForward,
        Self::ListContainerStats,
        Self::ListPodSandboxStats,
        Self::ImageFsInfo,
        Self::UpdateRuntimeConfig,
        Self::GetContainerEvents,
    ];

    /// The upstream `operation_type` label value.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Status => "status",
            Self::RunPodSandbox => "run_podsandbox",
            Self::StopPodSandbox => "stop_podsandbox",
            Self::RemovePodSandbox => "remove_podsandbox",
            Self::PodSandboxStatus => "podsandbox_status",
            Self::ListPodSandbox => "list_podsandbox",
            Self::CreateContainer => "create_container",
            Self::StartContainer => "start_container",
            Self::StopContainer => "stop_container",
            Self::RemoveContainer => "remove_container",
            Self::UpdateContainerResources => "update_container",
            Self::ContainerStatus => "container_status",
            Self::ListContainers => "list_containers",
            Self::ExecSync => "exec_sync",
            Self::PullImage => "pull_image",
            Self::ImageStatus => "image_status",
            Self::ListImages => "list_images",
            Self::RemoveImage => "remove_image",
            Self::ReopenContainerLog => "reopen_container_log",
            Self::Exec => "exec",
            Self::Attach => "attach",
            Self::PortForward => "port_forward",
            Self::ListContainerStats => "list_container_stats",
            Self::ListPodSandboxStats => "list_podsandbox_stats",
            Self::ImageFsInfo => "image_fs_info",
            Self::UpdateRuntimeConfig => "update_runtime_config",
            Self::GetContainerEvents => "get_container_events",
        }
    }
}

/// Registers the descriptions (help texts and units) of the runtime operation metrics with the
/// installed recorder. Calling it is optional and idempotent.
pub fn describe() {
    metrics::describe_counter!(
        OPERATIONS_TOTAL,
        "Cumulative number of runtime operations by operation type."
    );
    metrics::describe_counter!(
        OPERATIONS_ERRORS_TOTAL,
        "Cumulative number of runtime operation errors by operation type."
    );
    metrics::describe_histogram!(
        OPERATIONS_DURATION_SECONDS,
        metrics::Unit::Seconds,
        "Duration in seconds of runtime operations, by operation type."
    );
}

/// Records one finished call of `operation` that took `elapsed`.
pub(crate) fn record(operation: Operation, elapsed: Duration, failed: bool) {
    let label = [(OPERATION_TYPE_LABEL, operation.name())];
    metrics::counter!(OPERATIONS_TOTAL, &label).increment(1);
    metrics::histogram!(OPERATIONS_DURATION_SECONDS, &label).record(elapsed.as_secs_f64());
    if failed {
        metrics::counter!(OPERATIONS_ERRORS_TOTAL, &label).increment(1);
    }
}
