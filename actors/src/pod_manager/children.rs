//! The pod supervisor (`pods/pod-supervisor`): a dynamic supervisor with one pod actor per pod
//! the pod manager runs, each child named by its pod's UID. Every incarnation is made from
//! what the pod manager wants of that pod actor now ([`PodAssignments`]: the pod's current
//! spec with its allocated resources, a resize that waits, whether it is being terminated), so
//! a restarted pod actor acts on the desired pod and rebuilds the rest from the runtime. The
//! assignments are also where the allocations live: they outlive the pod manager. A pod actor
//! given up past its restart intensity is reported to the pod manager, which reports the pod.
//!
//! Entry point: [`pod_supervisor`].

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use sergeant_core::allocation::PendingResize;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::PodKey;
use sergeant_messages::supervision::ChildGaveUp;
use sergeant_supervisor::{
    inspect_with_get_tree, ChildEnv, ChildRef, ChildSpec, DynamicSpec, DynamicSupervisor,
    GiveUpPolicy, Incarnation, RestartPolicy, Slot,
};
use tokio::sync::watch;

use super::PodManager;
use crate::pod::worker::{PodWorker, WorkerDeps};

/// The pod supervisor's name in the tree.
pub const POD_SUPERVISOR: &str = "pod-supervisor";

/// What the pod manager wants of one pod actor.
#[derive(Clone)]
pub struct PodAssignment {
    /// Which pod.
    pub key: PodKey,
    /// The pod as its source has it now, with the resources the node allocated to it
    /// (`sergeant_core::allocation::with_allocation`); `None` for a pod only the runtime has,
    /// which is terminated.
    pub pod: Option<Arc<Pod>>,
    /// The resize the pod asks for that is not allocated, and why: its `PodResizePending`.
    pub resize_pending: Option<PendingResize>,
    /// Set once the pod is to be terminated, with the grace period that overrides the pod's
    /// own, if any.
    pub terminating: Option<Option<Duration>>,
    /// What the pod actor works with.
    pub deps: WorkerDeps,
}

/// Every pod actor the pod manager wants, by pod UID: written by the pod manager alone, read
/// by the pod supervisor whenever it makes an incarnation. It outlives the pod manager, so a
/// restarted pod manager takes over the pod actors that kept running.
pub type PodAssignments = watch::Sender<BTreeMap<String, PodAssignment>>;

impl PodAssignment {
    /// A fresh pod actor for this assignment at `env`'s place, in a span naming its pod.
    fn incarnation(&self, env: &ChildEnv) -> Incarnation<PodWorker> {
        let key = &self.key;
        env.set_status(format!("pod {}/{}", key.namespace, key.name));
        let mut worker = PodWorker::new(env, key.clone(), self.pod.clone(), self.deps.clone())
            .resize_pending(self.resize_pending.clone());
        if let Some(grace) = self.terminating {
            worker = worker.terminating(grace);
        }
        let span = tracing::info_span!(
            "pod",
            path = %env.path(),
            namespace = %key.namespace,
            name = %key.name,
            uid = %key.uid,
        );
        Incarnation {
            actor: worker,
            span,
        }
    }
}

/// The pod supervisor, published to `slot`: its children restart by `policy`, a child past
/// the intensity is tried again once the intensity period has passed, and the pod manager at
/// `manager` hears of it.
pub fn pod_supervisor(
    policy: &RestartPolicy,
    slot: &Slot<DynamicSupervisor<PodWorker>>,
    assignments: watch::Receiver<BTreeMap<String, PodAssignment>>,
    manager: ChildRef<PodManager>,
) -> ChildSpec {
    let make = move |uid: &str, env: &ChildEnv| {
        let assignment = assignments.borrow().get(uid).cloned()?;
        Some(assignment.incarnation(env))
    };
    let gave_up = move |report: ChildGaveUp| {
        let manager = manager.clone();
        // Waits out a restart of the pod manager, up to the delivery timeout.
        actix_rt::spawn(async move {
            if let Err(error) = manager.send(report).await {
                tracing::warn!("a pod actor given up was not reported: {error}");
            }
        });
    };
    let spec = DynamicSpec {
        policy: policy.clone(),
        give_up: GiveUpPolicy {
            retry_after: policy.intensity_period,
        },
        make: Rc::new(make),
        on_give_up: Some(Rc::new(gave_up)),
        on_failure: None,
        inspect: Some(inspect_with_get_tree()),
    };
    ChildSpec::dynamic_supervisor(POD_SUPERVISOR, slot, spec)
}
