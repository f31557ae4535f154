//! What the pod manager's admission needs from the runtime's own answers: whether it applies
//! `supplementalGroupsPolicy: Strict`. Followed from the runtime adapter's health polls; until
//! the runtime has answered once, a `Strict` pod waits rather than be admitted or refused on
//! a guess. Entry point: [`follow_runtime_features`].

use actix::{Addr, Context, Handler, Message};
use sergeant_core::node_status::facts::RuntimeHealth;
use tokio::sync::watch;

use super::actor::PodManager;

/// The runtime answered a status call: whether it applies `Strict` supplemental groups (a
/// runtime that reports no features does not).
#[derive(Debug, Clone, Copy)]
pub(super) struct RuntimeAnswered {
    pub strict_groups: bool,
}

impl Message for RuntimeAnswered {
    type Result = ();
}

/// Tells `manager` each answer of the runtime `health` reports, until either goes.
pub(super) async fn follow_runtime_features(
    mut health: watch::Receiver<RuntimeHealth>,
    manager: Addr<PodManager>,
) {
    loop {
        let answered = {
            let health = health.borrow_and_update();
            health.reachable.then(|| RuntimeAnswered {
                strict_groups: health.supplemental_groups_policy.unwrap_or(false),
            })
        };
        if let Some(answer) = answered {
            if manager.try_send(answer).is_err() {
                return;
            }
        }
        if health.changed().await.is_err() {
            return;
        }
    }
}

impl Handler<RuntimeAnswered> for PodManager {
    type Result = ();

    fn handle(&mut self, answer: RuntimeAnswered, ctx: &mut Context<Self>) {
        if self.strict_groups != Some(answer.strict_groups) {
            self.strict_groups = Some(answer.strict_groups);
            self.reconcile(ctx);
        }
    }
}
