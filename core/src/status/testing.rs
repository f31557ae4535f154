//! Hand-built pods and runtime objects for the status tests: one helper per kind of object.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::{Knowledge, Observed};
use crate::labels;

/// An API time `secs` seconds after the epoch.
pub(super) fn at(secs: i64) -> Time {
    Time(Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH))
}

/// Seconds as CRI nanoseconds.
pub(super) fn nanos(secs: i64) -> i64 {
    secs * 1_000_000_000
}

/// The one builder of runtime containers: attempt `attempt` of container `name`, with the
/// labels and annotations sergeant writes. Created at `100 + 10 × attempt` s, started one second
/// later unless only created, finished four seconds after that when exited.
pub(super) fn runtime_container(
    name: &str,
    attempt: u32,
    state: cri::ContainerState,
    exit_code: i32,
) -> cri::ContainerStatus {
    let created = 100 + 10 * i64::from(attempt);
    let started = state != cri::ContainerState::ContainerCreated;
    let exited = state == cri::ContainerState::ContainerExited;
    cri::ContainerStatus {
        id: format!("{name}-{attempt}"),
        metadata: Some(cri::ContainerMetadata {
            name: name.to_owned(),
            attempt,
        }),
        state: state as i32,
        created_at: nanos(created),
        started_at: if started { nanos(created + 1) } else { 0 },
        finished_at: if exited { nanos(created + 5) } else { 0 },
        exit_code,
        image_ref: format!("docker.io/library/{name}@sha256:{attempt}"),
        reason: match (exited, exit_code) {
            (false, _) => String::new(),
            (true, 0) => "Completed".to_owned(),
            (true, _) => "Error".to_owned(),
        },
        labels: [(labels::CONTAINER_NAME.to_owned(), name.to_owned())].into(),
        annotations: [(
            labels::CONTAINER_RESTART_COUNT.to_owned(),
            attempt.to_string(),
        )]
        .into(),
        ..cri::ContainerStatus::default()
    }
}

/// A running attempt.
pub(super) fn running(name: &str, attempt: u32) -> cri::ContainerStatus {
    runtime_container(name, attempt, cri::ContainerState::ContainerRunning, 0)
}

/// An exited attempt with `exit_code`.
pub(super) fn exited(name: &str, attempt: u32, exit_code: i32) -> cri::ContainerStatus {
    runtime_container(
        name,
        attempt,
        cri::ContainerState::ContainerExited,
        exit_code,
    )
}

/// A spec container.
pub(super) fn container(name: &str) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(format!("{name}:1")),
        ..Container::default()
    }
}

/// A spec init container with `restartPolicy: Always`.
pub(super) fn sidecar(name: &str) -> Container {
    Container {
        restart_policy: Some("Always".to_owned()),
        ..container(name)
    }
}

/// A pod with `restart_policy`, these init containers (plain or sidecars) and regular ones.
pub(super) fn pod(restart_policy: &str, init: Vec<Container>, regular: &[&str]) -> Pod {
    Pod {
        spec: Some(PodSpec {
            restart_policy: Some(restart_policy.to_owned()),
            init_containers: (!init.is_empty()).then_some(init),
            containers: regular.iter().map(|name| container(name)).collect(),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// A ready sandbox with a primary IP and additional ones.
pub(super) fn sandbox(ip: &str, additional: &[&str]) -> cri::PodSandboxStatus {
    cri::PodSandboxStatus {
        id: "sandbox".to_owned(),
        state: cri::PodSandboxState::SandboxReady as i32,
        network: Some(cri::PodSandboxNetworkStatus {
            ip: ip.to_owned(),
            additional_ips: additional
                .iter()
                .map(|ip| cri::PodIp {
                    ip: (*ip).to_owned(),
                })
                .collect(),
        }),
        ..cri::PodSandboxStatus::default()
    }
}

/// What the runtime shows: a ready sandbox at 10.0.0.5 and these containers.
pub(super) fn observed(containers: Vec<cri::ContainerStatus>) -> Observed {
    Observed {
        sandbox: Some(sandbox("10.0.0.5", &[])),
        containers,
        runtime_name: String::new(),
        pod_cgroup: None,
    }
}

/// Knowledge with nothing in it but the clock, fixed at 1000 s.
pub(super) fn knowledge() -> Knowledge {
    Knowledge {
        now: Some(at(1000)),
        ..Knowledge::default()
    }
}

/// The status of the container named `name` in `status` (init or regular).
pub(super) fn container_status<'a>(status: &'a PodStatus, name: &str) -> &'a ContainerStatus {
    status
        .init_container_statuses
        .iter()
        .chain(&status.container_statuses)
        .flatten()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no status for container {name}"))
}
