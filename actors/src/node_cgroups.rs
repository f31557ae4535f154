//! The `node-cgroups` actor: keeps the cgroups above the pods — `kubepods` with what all pods
//! together may use, and its QoS children `burstable` and `besteffort` with their cpu shares —
//! at what `sergeant_core::spec::qos_cgroups` decides for the pods assigned now and the
//! configuration in force, as upstream's node-allocatable and QoS container managers do: at
//! start, whenever the assigned pods or the configuration change, and every minute (so a
//! value someone else changed is put back). Entry point: [`child_spec`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use sergeant_core::allocatable::NodeResources;
use sergeant_core::spec::{qos_cgroups, NodeCgroup, NodeContext};
use sergeant_supervisor::{ChildEnv, ChildSpec, Slot};
use tokio::sync::watch;
use tracing::Instrument;

use crate::config_feed::{self, ConfigState};
use crate::pod_manager::PodAssignment;

/// How often the cgroups are written again even when nothing changed (upstream's periodic QoS
/// update).
const REFRESH: Duration = Duration::from_secs(60);
/// Writes of the node-level cgroups that failed (a memory limit below what the pods use, a
/// cgroup file system that refuses).
const FAILURES_METRIC: &str = "sergeant_node_cgroup_update_failures_total";

/// Keeps the node-level cgroups.
pub struct NodeCgroups {
    env: ChildEnv,
    config: watch::Receiver<ConfigState>,
    assignments: watch::Receiver<BTreeMap<String, PodAssignment>>,
    node: Option<Arc<NodeContext>>,
    /// What was last written successfully.
    written: Option<Vec<NodeCgroup>>,
    /// A write is under way.
    writing: bool,
    /// Something changed while a write was under way: look again when it ends.
    stale: bool,
}

/// The `node-cgroups` worker: follows `assignments` (the pods the pod manager runs) and
/// `config`.
#[must_use]
pub fn child_spec(
    config: watch::Receiver<ConfigState>,
    assignments: watch::Receiver<BTreeMap<String, PodAssignment>>,
) -> ChildSpec {
    const NAME: &str = "node-cgroups";
    ChildSpec::worker(NAME, &Slot::new(NAME), move |env| NodeCgroups {
        env: env.clone(),
        config: config.clone(),
        assignments: assignments.clone(),
        node: None,
        written: None,
        writing: false,
        stale: false,
    })
}

impl NodeCgroups {
    /// What the cgroups should hold now, with the node's process capacity `pid_max`.
    fn plan(&self, node: &NodeContext, pid_max: i64) -> Vec<NodeCgroup> {
        let config = self.config.borrow();
        let limits = NodeResources::of_machine(node.cpus, node.memory_capacity_bytes)
            .pods_cgroup_limits(&config.active.kubelet, pid_max);
        let assigned = self.assignments.borrow();
        let active = assigned
            .values()
            .filter(|a| a.terminating.is_none())
            .filter_map(|a| a.pod.as_deref());
        qos_cgroups(node, limits, active)
    }

    fn changed(&mut self, ctx: &mut Context<Self>) {
        self.update(false, ctx);
    }

    /// Writes the plan when it differs from what was written (`always`: even when not).
    fn update(&mut self, always: bool, ctx: &mut Context<Self>) {
        let Some(node) = self.node.clone() else {
            return;
        };
        if self.writing {
            self.stale = true;
            return;
        }
        let pid_max = match sergeant_host::node::pid_max() {
            Ok(max) => max,
            Err(err) => {
                self.env.set_status(format!("not updated: {err}"));
                return;
            }
        };
        let plan = self.plan(&node, pid_max);
        if !always && self.written.as_ref() == Some(&plan) {
            return;
        }
        self.writing = true;
        let span = tracing::debug_span!("node_cgroups_update", cgroups = plan.len());
        let write = {
            let plan = plan.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    plan.iter()
                        .try_for_each(sergeant_host::cgroup::set_node_cgroup)
                })
                .await
                .unwrap_or_else(|e| Err(sergeant_core::spec::SpecError::cgroup("/", e.to_string())))
            }
        };
        ctx.spawn(
            write
                .instrument(span)
                .into_actor(self)
                .map(move |result, act, ctx| {
                    act.writing = false;
                    match result {
                        Ok(()) => {
                            act.env.set_status(describe(&plan));
                            act.written = Some(plan);
                        }
                        Err(err) => {
                            metrics::counter!(FAILURES_METRIC).increment(1);
                            tracing::warn!("node-level cgroups not updated: {err}");
                            act.env.set_status(format!("last update failed: {err}"));
                            act.written = None;
                        }
                    }
                    if std::mem::take(&mut act.stale) {
                        act.update(false, ctx);
                    }
                }),
        );
    }
}

/// The status line: each cgroup and its limits.
fn describe(plan: &[NodeCgroup]) -> String {
    if plan.is_empty() {
        return "cgroupsPerQOS is off: pods go under the cgroup root".to_owned();
    }
    let shown: Vec<String> = plan
        .iter()
        .map(|c| {
            let or_max = |v: Option<i64>| v.map_or_else(|| "max".to_owned(), |v| v.to_string());
            format!(
                "{} (cpu shares {}, memory {}, pids {})",
                c.path,
                c.cpu_shares,
                or_max(c.memory_limit_bytes),
                or_max(c.pids_max)
            )
        })
        .collect();
    shown.join("; ")
}

impl Actor for NodeCgroups {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_counter!(
            FAILURES_METRIC,
            "Updates of the node-level cgroups (kubepods and its QoS cgroups) that failed."
        );
        self.env.set_status("reading the node's settings");
        config_feed::follow(ctx, self.config.clone(), Self::changed);
        config_feed::follow(ctx, self.assignments.clone(), Self::changed);
        ctx.run_interval(REFRESH, |act, ctx| act.update(true, ctx));
        let config = self.config.clone();
        let read = async move { config_feed::node_context(&config).await };
        ctx.spawn(read.into_actor(self).map(|node, act, ctx| {
            match node {
                Ok(node) => {
                    act.node = Some(Arc::new(node));
                    act.update(true, ctx);
                }
                Err(reason) => act
                    .env
                    .fail(ctx, format!("cannot read the node's settings: {reason}")),
            }
        }));
    }
}
