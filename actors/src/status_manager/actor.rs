//! The status manager actor: one write queue per API pod (or static pod with a mirror pod),
//! fed by the pod manager, drained against the API server; the API source's snapshot and the
//! mirror pods tell it what the API server holds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use kube::Client;
use sergeant_messages::pods::core::{Pod, PodStatus};
use sergeant_messages::pods::{PodKey, SourceSnapshot};
use tokio::sync::watch;
use tracing::Instrument;

use super::write::{delete_pod, patch_status, WriteError};
use crate::mirror::MirrorView;
use sergeant_core::status::merge::merged;
use sergeant_core::status::write_queue::{Next, PodEntry};
use sergeant_core::status::write_slots::WriteSlots;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

const SYNC_DURATION: &str = "kubelet_pod_status_sync_duration_seconds";
const PATCHES: &str = "sergeant_pod_status_patches_total";

/// Writes the status of API pods to the API server, and deletes pods the pod actors finished
/// terminating after a graceful deletion.
pub struct StatusManager {
    env: ChildEnv,
    client: Client,
    api_pods: watch::Receiver<SourceSnapshot>,
    mirrors: watch::Receiver<MirrorView>,
    statics: watch::Receiver<SourceSnapshot>,
    /// By the UID of the pod on the node; the key is the API pod's (a mirror pod has a UID of
    /// its own).
    pods: BTreeMap<String, (PodKey, PodEntry)>,
    /// The newest status of each static pod on the node, kept while its manifest is there: a
    /// mirror pod made (again) later — after the Node registered, or after someone deleted it —
    /// gets it at once instead of at the pod's next resync.
    static_reports: BTreeMap<String, ReportStatus>,
    /// The writes under way, and the pods waiting for one to finish.
    slots: WriteSlots,
}

impl StatusManager {
    /// A status manager writing through `client` what `views` show is in the API server.
    #[must_use]
    pub fn new(env: &ChildEnv, client: Client, views: ApiViews) -> Self {
        Self {
            env: env.clone(),
            client,
            api_pods: views.api_pods,
            mirrors: views.mirrors,
            statics: views.statics,
            pods: BTreeMap::new(),
            static_reports: BTreeMap::new(),
            slots: WriteSlots::default(),
        }
    }

    /// The API server's copy of the pod `uid`, as last watched: the API pod itself, or the
    /// mirror pod of the static pod `uid`.
    fn api_pod(&self, uid: &str) -> Option<Arc<Pod>> {
        self.api_pods
            .borrow()
            .pods
            .iter()
            .find(|p| p.metadata.uid.as_deref() == Some(uid))
            .cloned()
            .or_else(|| self.mirrors.borrow().get(uid).cloned())
    }

    /// Starts what the pod `uid`'s queue has to do next.
    fn kick(&mut self, uid: &str, ctx: &mut Context<Self>) {
        if !self.slots.admit(uid) {
            return;
        }
        let api = self.api_pod(uid);
        let Some((key, entry)) = self.pods.get_mut(uid) else {
            return;
        };
        let deleting = api
            .as_ref()
            .is_some_and(|p| p.metadata.deletion_timestamp.is_some());
        let key = key.clone();
        let span = tracing::info_span!("pod-status", namespace = %key.namespace, name = %key.name, uid = %key.uid);
        match entry.next(deleting, api.as_ref().and_then(|p| p.status.as_ref())) {
            Next::Idle => {}
            Next::Patch(status) => {
                self.slots.started();
                let client = self.client.clone();
                let work = async move {
                    let result = match failpoint::check("status-manager::patch") {
                        Ok(()) => patch_status(client, &key, &status).await,
                        Err(fault) => Err(WriteError::Failed {
                            pod: key.to_string(),
                            reason: fault.to_string(),
                        }),
                    };
                    (*status, result)
                };
                let uid = uid.to_owned();
                ctx.spawn(
                    work.instrument(span).into_actor(self).map(
                        move |(status, result), act, ctx| act.patched(&uid, status, result, ctx),
                    ),
                );
            }
            Next::Delete => {
                self.slots.started();
                let client = self.client.clone();
                tracing::info!(pod = %key, "pod terminated, deleting it from the API server");
                let work = async move { delete_pod(client, &key).await };
                let uid = uid.to_owned();
                ctx.spawn(
                    work.instrument(span)
                        .into_actor(self)
                        .map(move |result, act, ctx| {
                            act.write_done(ctx);
                            match result {
                                Ok(()) => {
                                    act.pods.remove(&uid);
                                    act.show_status();
                                }
                                Err(error) => act.retry_later(&uid, None, &error, ctx),
                            }
                        }),
                );
            }
        }
    }

    fn patched(
        &mut self,
        uid: &str,
        status: PodStatus,
        result: Result<(), WriteError>,
        ctx: &mut Context<Self>,
    ) {
        self.write_done(ctx);
        match result {
            Ok(()) => {
                metrics::counter!(PATCHES, "result" => "success").increment(1);
                if let Some((_, entry)) = self.pods.get_mut(uid) {
                    let waited = entry.written(status, Instant::now());
                    metrics::histogram!(SYNC_DURATION).record(waited.as_secs_f64());
                }
                self.kick(uid, ctx);
            }
            Err(gone @ WriteError::Gone { .. }) => {
                metrics::counter!(PATCHES, "result" => "gone").increment(1);
                tracing::debug!("{gone}; forgetting its status");
                self.pods.remove(uid);
            }
            Err(error) => {
                metrics::counter!(PATCHES, "result" => "error").increment(1);
                // The status that failed goes back in the queue unless a newer one came.
                self.retry_later(uid, Some(status), &error, ctx);
            }
        }
        self.show_status();
    }

    /// A write finished: the pods that waited for one take their next steps, oldest first,
    /// while slots are free.
    fn write_done(&mut self, ctx: &mut Context<Self>) {
        self.slots.finished();
        while let Some(uid) = self.slots.next_waiting() {
            self.kick(&uid, ctx);
        }
    }

    fn retry_later(
        &mut self,
        uid: &str,
        status: Option<PodStatus>,
        error: &WriteError,
        ctx: &mut Context<Self>,
    ) {
        let Some((_, entry)) = self.pods.get_mut(uid) else {
            return;
        };
        let delay = entry.failed(status);
        tracing::warn!("{error}; retrying in {delay:?}");
        let uid = uid.to_owned();
        ctx.run_later(delay, move |act, ctx| {
            if let Some((_, entry)) = act.pods.get_mut(&uid) {
                entry.retry();
            }
            act.kick(&uid, ctx);
        });
    }

    /// Drops the queues of pods the API server no longer has (once its view is complete).
    fn forget_gone(&mut self) {
        let snapshot = self.api_pods.borrow();
        if !snapshot.synced {
            return;
        }
        let mirrors = self.mirrors.borrow();
        let known: Vec<&str> = snapshot
            .pods
            .iter()
            .filter_map(|p| p.metadata.uid.as_deref())
            .chain(mirrors.keys().map(String::as_str))
            .collect();
        self.pods
            .retain(|uid, (_, entry)| entry.busy() || known.contains(&uid.as_str()));
    }

    /// Forgets the statuses of static pods whose manifests went, and hands the others to their
    /// mirror pods (a no-op for a status already written there).
    fn place_static_reports(&mut self, ctx: &mut Context<Self>) {
        let on_node: BTreeSet<String> = self
            .statics
            .borrow()
            .pods
            .iter()
            .filter_map(|p| p.metadata.uid.clone())
            .collect();
        self.static_reports.retain(|uid, _| on_node.contains(uid));
        let reports: Vec<ReportStatus> = self.static_reports.values().cloned().collect();
        for report in reports {
            self.place(report, ctx);
        }
    }

    fn is_static(&self, uid: &str) -> bool {
        self.statics
            .borrow()
            .pods
            .iter()
            .any(|p| p.metadata.uid.as_deref() == Some(uid))
    }

    /// Queues `report` for the API server's copy of its pod, if there is one.
    fn place(&mut self, report: ReportStatus, ctx: &mut Context<Self>) {
        let api = self.api_pod(&report.key.uid);
        let Some(api) = api else {
            return; // not (or not yet, or no longer) in the API server
        };
        let Some(status) = merged(api.status.as_ref(), &report.status) else {
            tracing::warn!(pod = %report.key, "not moving a terminated pod back to a live phase");
            return;
        };
        let uid = report.key.uid.clone();
        // Written to the API's pod: for a static pod, its mirror pod, by the mirror's UID.
        let key = PodKey {
            uid: api.metadata.uid.clone().unwrap_or_default(),
            ..report.key
        };
        let slot = self
            .pods
            .entry(uid.clone())
            .or_insert_with(|| (key.clone(), PodEntry::default()));
        if slot.0 != key {
            // A mirror pod made again: nothing is written to the new one yet.
            *slot = (key, PodEntry::default());
        }
        slot.1.report(status, api.status.as_ref(), Instant::now());
        self.kick(&uid, ctx);
    }

    fn show_status(&self) {
        self.env.set_status(format!(
            "tracking the status of {} API pods, {} writes under way",
            self.pods.len(),
            self.slots.in_flight()
        ));
    }
}

impl Actor for StatusManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_histogram!(
            SYNC_DURATION,
            "Duration in seconds to sync a pod status update: from a change of the status until the API server has it."
        );
        metrics::describe_counter!(
            PATCHES,
            "Pod status patches sent to the API server, by result (success, error, gone)."
        );
        let (mut api_pods, mut mirrors) = (self.api_pods.clone(), self.mirrors.clone());
        let mut statics = self.statics.clone();
        let addr = ctx.address();
        ctx.spawn(
            async move {
                loop {
                    let changed = tokio::select! {
                        changed = api_pods.changed() => changed,
                        changed = mirrors.changed() => changed,
                        changed = statics.changed() => changed,
                    };
                    if changed.is_err() {
                        break;
                    }
                    addr.do_send(ApiPodsChanged);
                }
            }
            .into_actor(self),
        );
        self.show_status();
    }
}

/// The API source's view, the mirror pods or the static pods changed.
#[derive(Debug, Clone, Copy)]
struct ApiPodsChanged;

impl Message for ApiPodsChanged {
    type Result = ();
}

impl Handler<ApiPodsChanged> for StatusManager {
    type Result = ();

    fn handle(&mut self, _: ApiPodsChanged, ctx: &mut Context<Self>) {
        self.forget_gone();
        self.place_static_reports(ctx);
        // A deletion timestamp may have come for a pod already terminated.
        let uids: Vec<String> = self.pods.keys().cloned().collect();
        for uid in uids {
            self.kick(&uid, ctx);
        }
        self.show_status();
    }
}

/// What the status manager reads of the API server's state.
#[derive(Debug, Clone)]
pub struct ApiViews {
    /// The API source's view of the node's pods.
    pub api_pods: watch::Receiver<SourceSnapshot>,
    /// The mirror pods, by static pod UID.
    pub mirrors: watch::Receiver<MirrorView>,
    /// The static pods (from their manifests), whose statuses go to their mirror pods.
    pub statics: watch::Receiver<SourceSnapshot>,
}

/// The newest status a pod actor computed for an API pod.
#[derive(Debug, Clone)]
pub struct ReportStatus {
    /// Which pod.
    pub key: PodKey,
    /// Its status.
    pub status: PodStatus,
}

impl Message for ReportStatus {
    type Result = ();
}

impl Handler<ReportStatus> for StatusManager {
    type Result = ();

    fn handle(&mut self, report: ReportStatus, ctx: &mut Context<Self>) {
        if self.is_static(&report.key.uid) {
            self.static_reports
                .insert(report.key.uid.clone(), report.clone());
        }
        self.place(report, ctx);
        self.show_status();
    }
}

/// The pod actor finished terminating an API pod: once its last status is written, a pod
/// being deleted is deleted from the API server.
#[derive(Debug, Clone)]
pub struct PodFinished {
    /// Which pod.
    pub key: PodKey,
}

impl Message for PodFinished {
    type Result = ();
}

impl Handler<PodFinished> for StatusManager {
    type Result = ();

    fn handle(&mut self, done: PodFinished, ctx: &mut Context<Self>) {
        if self.api_pod(&done.key.uid).is_none() {
            return;
        }
        let uid = done.key.uid.clone();
        let (_, entry) = self
            .pods
            .entry(uid.clone())
            .or_insert_with(|| (done.key, PodEntry::default()));
        entry.finish();
        self.kick(&uid, ctx);
        self.show_status();
    }
}
