//! The pod as the agent reports it: the desired pod with the status computed from a sync's
//! outcome (or from an admission rejection).

use std::time::SystemTime;

use sergeant_messages::pods::core::{Pod, PodStatus};

use super::spec::NodeContext;
use super::status::{api_time, compute, Knowledge, Observed};
use super::sync::SyncOutcome;

/// `pod` with the status its last sync found; `previous` keeps condition transition times.
/// `known` is what the pod actor knows beyond the runtime (start time, probe verdicts, a
/// failure of the whole pod); the sync's findings and the node's addresses are added here.
#[must_use]
pub fn status(
    pod: &Pod,
    previous: Option<&PodStatus>,
    outcome: &SyncOutcome,
    node: &NodeContext,
    known: Knowledge,
) -> Pod {
    let observed = Observed {
        sandbox: outcome.runtime.sandbox_status.clone(),
        containers: outcome
            .runtime
            .containers
            .iter()
            .map(|c| c.status.clone())
            .collect(),
        runtime_name: String::new(),
    };
    let knowledge = Knowledge {
        waiting: outcome.waiting.clone(),
        termination_messages: outcome.termination_messages.clone(),
        host_ips: node.node_ip.iter().map(ToString::to_string).collect(),
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
