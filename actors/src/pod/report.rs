//! The pod as the agent reports it: the desired pod with the status computed from a look at
//! the runtime and at its pod cgroup (or from an admission rejection).

use std::time::SystemTime;

use sergeant_messages::pods::core::{Pod, PodStatus};

use sergeant_core::pod_update::gate_conditions;
use sergeant_core::runtime::PodRuntime;
use sergeant_core::spec::{managed_pod_cgroup, NodeContext};
use sergeant_core::status::{api_time, compute, Knowledge, Observed};

/// `pod` with the status `runtime` shows — a look at the runtime, so only a measurement is
/// reported — and `previous` keeping condition transition times. `known` is what the pod
/// actor knows beyond the runtime (start time, probe verdicts, why containers wait, their
/// termination messages, a failure of the whole pod); the node's addresses and the conditions
/// other clients set on `pod` (its readiness gates') are added here, and the pod cgroup's
/// settings are read (a few small files of sergeant's own, on the calling thread) while its
/// sandbox is ready.
#[must_use]
pub fn status(
    pod: &Pod,
    previous: Option<&PodStatus>,
    runtime: &PodRuntime,
    node: &NodeContext,
    known: Knowledge,
) -> Pod {
    let observed = Observed {
        sandbox: runtime.sandbox_status.clone(),
        containers: runtime
            .containers
            .iter()
            .map(|c| c.status.clone())
            .collect(),
        runtime_name: String::new(),
        pod_cgroup: runtime
            .ready_sandbox()
            .and_then(|_| managed_pod_cgroup(pod, node))
            .and_then(|path| {
                sergeant_host::cgroup::read_pod_cgroup_resources(&path)
                    .inspect_err(|err| tracing::debug!("pod cgroup not read: {err}"))
                    .ok()
                    .flatten()
            }),
    };
    let knowledge = Knowledge {
        host_ips: node.node_ip.iter().map(ToString::to_string).collect(),
        api_conditions: gate_conditions(pod).into_iter().cloned().collect(),
        ..known
    };
    with_status(pod, previous, &observed, &knowledge)
}

/// `pod` refused at admission: phase Failed with the reason.
#[must_use]
pub fn rejected(pod: &Pod, reason: &str, message: &str) -> Pod {
    let knowledge = Knowledge {
        rejection: Some((reason.to_owned(), message.to_owned())),
        start_time: Some(api_time(SystemTime::now())),
        ..Knowledge::default()
    };
    with_status(pod, None, &Observed::default(), &knowledge)
}

fn with_status(
    pod: &Pod,
    previous: Option<&PodStatus>,
    observed: &Observed,
    knowledge: &Knowledge,
) -> Pod {
    let mut reported = pod.clone();
    reported.status = previous.cloned();
    let status = compute(&reported, observed, knowledge);
    reported.status = Some(status);
    reported
}
