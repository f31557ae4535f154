//! Polling the runtime's health through the port: the version handshake and the
//! `RuntimeReady` / `NetworkReady` conditions, every few seconds while the runtime answers and
//! with a doubling delay while it does not.

use std::time::Duration;

use actix::{AsyncContext, Context, Message, Recipient, SpawnHandle};
use sergeant_core::backoff::Doubling;
use sergeant_core::node_status::facts::RuntimeHealth;
use sergeant_messages::runtime::{cri, RuntimeCall};

use super::adapter::RuntimeAdapter;
use super::port::RuntimePort;
use super::spec::AdapterSpec;

/// The poll period while the runtime answers.
const HEALTHY_PERIOD: Duration = Duration::from_secs(5);
/// The first retry delay once it stops answering, doubling up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(500);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Time to ask the runtime how it is.
#[derive(Debug, Clone, Copy)]
pub(super) struct Poll;

impl Message for Poll {
    type Result = ();
}

/// When the next poll is due: the pending poll and the current retry delay.
pub(super) struct PollSchedule {
    next: Option<SpawnHandle>,
    retry: Doubling,
}

impl Default for PollSchedule {
    fn default() -> Self {
        Self {
            next: None,
            retry: Doubling::new(FIRST_RETRY, MAX_RETRY),
        }
    }
}

impl PollSchedule {
    /// Polls at once (at start and after a swap), replacing any pending poll.
    pub(super) fn poll_now(&mut self, ctx: &mut Context<RuntimeAdapter>) {
        if let Some(handle) = self.next.take() {
            ctx.cancel_future(handle);
        }
        self.retry.reset();
        ctx.notify(Poll);
    }

    /// Schedules the next poll after one that found the runtime `reachable` or not.
    pub(super) fn schedule_next(&mut self, ctx: &mut Context<RuntimeAdapter>, reachable: bool) {
        let delay = if reachable {
            self.retry.reset();
            HEALTHY_PERIOD
        } else {
            self.retry.next_delay()
        };
        self.next = Some(ctx.notify_later(Poll, delay));
    }
}

/// Asks the adapter for the runtime's version and conditions.
pub(super) async fn probe(port: Recipient<RuntimeCall>, spec: AdapterSpec) -> RuntimeHealth {
    let mut health = RuntimeHealth {
        adapter: spec.kind_name().to_owned(),
        endpoint: spec.runtime_endpoint.to_string(),
        ..RuntimeHealth::default()
    };
    let port = RuntimePort::direct(port);
    let version = port.call(cri::VersionRequest::default()).await;
    let status = port.call(cri::StatusRequest { verbose: false }).await;
    match (version, status) {
        (Ok(version), Ok(status)) => {
            health.reachable = true;
            health.runtime_version =
                format!("{} {}", version.runtime_name, version.runtime_version);
            health.supplemental_groups_policy =
                status.features.map(|f| f.supplemental_groups_policy);
            let conditions = status.status.map(|s| s.conditions).unwrap_or_default();
            let condition = |kind: &str| conditions.iter().find(|c| c.r#type == kind);
            health.runtime_ready = condition("RuntimeReady").is_some_and(|c| c.status);
            health.network_ready = condition("NetworkReady").is_some_and(|c| c.status);
            health.message = conditions
                .iter()
                .filter(|c| !c.status)
                .map(|c| format!("{}: {} {}", c.r#type, c.reason, c.message))
                .collect::<Vec<_>>()
                .join("; ");
        }
        (Err(err), _) | (_, Err(err)) => health.message = err.to_string(),
    }
    health
}
