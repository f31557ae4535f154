//! The `mirror-pods` actor (managed mode): keeps a mirror pod in the API server for every
//! static pod, as upstream's pod sync does through its mirror client — made when missing,
//! made again when deleted or outdated, deleted when its static pod goes — and publishes the
//! mirror pods by static pod hash for the status manager.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use actix::{
    Actor, ActorFutureExt, AsyncContext, Context, Handler, Message, StreamHandler, WrapFuture,
};
use kube::Client;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::pods::SourceSnapshot;
use tokio::sync::watch;

use super::write::{create, delete, node_uid, MirrorError};
use super::MirrorView;
use sergeant_core::backoff::RetryBackoff;
use sergeant_core::mirror::plan::{key_of, plan, Action};
use sergeant_core::mirror::pod::mirror_of;
use sergeant_core::source::{is_static_pod, mirror_hash};
use sergeant_kube_api::mirror_store::{MirrorStore, Written};
use sergeant_kube_api::{node_pods, PodWatchItem};
use sergeant_supervisor::failpoint;
use sergeant_supervisor::ChildEnv;

/// How often the mirror pods are checked even when nothing changed (a failed write is retried
/// then).
const RECHECK: Duration = Duration::from_secs(10);
/// The first and the largest step between two reads of the Node's UID until it is registered:
/// on a fresh node the node-status actor registers it within moments, and the mirror pods
/// should follow as promptly, not at the next recheck.
const NODE_RETRY: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(5));

/// Keeps the mirror pods of the node's static pods.
pub struct MirrorPods {
    env: ChildEnv,
    client: Client,
    node: String,
    statics: watch::Receiver<SourceSnapshot>,
    out: watch::Sender<MirrorView>,
    store: MirrorStore,
    node_uid: Option<String>,
    /// The delay before the Node's UID is read again.
    node_retry: RetryBackoff,
    /// Pods (`namespace/name`) with a write in flight.
    busy: BTreeSet<String>,
}

impl MirrorPods {
    /// Mirrors the static pods of `statics` (the file source) on node `node` through `client`,
    /// publishing the mirror pods on `out`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        client: Client,
        node: String,
        statics: watch::Receiver<SourceSnapshot>,
        out: watch::Sender<MirrorView>,
    ) -> Self {
        Self {
            env: env.clone(),
            client,
            node,
            statics,
            out,
            store: MirrorStore::default(),
            node_uid: None,
            node_retry: RetryBackoff::new(NODE_RETRY.0, NODE_RETRY.1),
            busy: BTreeSet::new(),
        }
    }

    /// Compares the static pods with the mirror pods and starts the writes that differ.
    fn look(&mut self, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("mirror-pods::look") {
            return self.env.fail(ctx, fault);
        }
        let (statics, synced) = {
            let snapshot = self.statics.borrow();
            let statics: BTreeMap<String, Arc<Pod>> = snapshot
                .pods
                .iter()
                .filter(|p| is_static_pod(p))
                .map(|p| (key_of(p), Arc::clone(p)))
                .collect();
            (statics, snapshot.synced)
        };
        if !self.store.synced() {
            return self.env.set_status("listing mirror pods (not synced yet)");
        }
        self.publish();
        if !synced {
            return self
                .env
                .set_status("waiting for the static pods to be read");
        }
        self.env.set_status(format!(
            "{} static pods, {} mirror pods",
            statics.len(),
            self.store.view().len()
        ));
        for (key, action) in plan(&statics, self.store.view()) {
            if self.busy.contains(&key) {
                continue;
            }
            let client = self.client.clone();
            let work = match action {
                Action::Create(static_pod) => {
                    let Some(owner) = self.node_uid.clone() else {
                        continue; // the Node is not registered yet: looked at again once it is
                    };
                    tracing::info!(pod = key, "creating the mirror pod");
                    let mirror = mirror_of(&static_pod, &self.node, &owner);
                    futures::future::FutureExt::boxed_local(async move {
                        create(client, &mirror)
                            .await
                            .map(|pod| Written::Created(Arc::new(pod)))
                    })
                }
                Action::Delete {
                    namespace,
                    name,
                    uid,
                } => {
                    tracing::info!(pod = key, "deleting an outdated or orphaned mirror pod");
                    let key = key.clone();
                    futures::future::FutureExt::boxed_local(async move {
                        delete(client, &namespace, &name, &uid)
                            .await
                            .map(|()| Written::Deleted { key, uid })
                    })
                }
            };
            self.busy.insert(key.clone());
            ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
                act.busy.remove(&key);
                match result {
                    Ok(written) => {
                        act.store.wrote(written);
                        act.look(ctx);
                    }
                    Err(error) => tracing::warn!(pod = key, "{error}; retrying"),
                }
            }));
        }
    }

    /// Publishes the mirror pods (not being deleted) by the hash of their static pod.
    fn publish(&self) {
        let view: MirrorView = self
            .store
            .view()
            .values()
            .filter(|m| m.metadata.deletion_timestamp.is_none())
            .filter_map(|m| Some((mirror_hash(m)?.to_owned(), Arc::clone(m))))
            .collect();
        self.out.send_if_modified(|current| {
            let changed = *current != view;
            if changed {
                *current = view;
            }
            changed
        });
    }

    /// Reads the Node's UID, again and again until it is registered.
    fn fetch_node_uid(&self, ctx: &mut Context<Self>) {
        let (client, node) = (self.client.clone(), self.node.clone());
        let work = async move { node_uid(client, &node).await };
        ctx.spawn(work.into_actor(self).map(|result, act, ctx| {
            match result {
                Ok(uid) => {
                    act.node_uid = Some(uid);
                    return act.look(ctx);
                }
                Err(error @ MirrorError::NoNode { .. }) => tracing::debug!("{error}"),
                Err(error) => tracing::warn!("{error}"),
            }
            ctx.run_later(act.node_retry.next_delay(), |act, ctx| {
                act.fetch_node_uid(ctx);
            });
        }));
    }
}

impl Actor for MirrorPods {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.env.set_status("listing mirror pods (not synced yet)");
        let mut statics = self.statics.clone();
        let addr = ctx.address();
        ctx.spawn(
            async move {
                while statics.changed().await.is_ok() {
                    addr.do_send(StaticsChanged);
                }
            }
            .into_actor(self),
        );
        ctx.add_stream(node_pods(self.client.clone(), &self.node));
        self.fetch_node_uid(ctx);
        ctx.run_interval(RECHECK, Self::look);
    }
}

/// The static pods changed.
#[derive(Debug, Clone, Copy)]
struct StaticsChanged;

impl Message for StaticsChanged {
    type Result = ();
}

impl Handler<StaticsChanged> for MirrorPods {
    type Result = ();

    fn handle(&mut self, _: StaticsChanged, ctx: &mut Context<Self>) {
        self.look(ctx);
    }
}

impl StreamHandler<PodWatchItem> for MirrorPods {
    fn handle(&mut self, event: PodWatchItem, ctx: &mut Context<Self>) {
        match event {
            Ok(event) => {
                if self.store.apply(event) {
                    self.look(ctx);
                }
            }
            Err(error) => tracing::warn!("watching mirror pods failed, retrying: {error}"),
        }
    }
}
