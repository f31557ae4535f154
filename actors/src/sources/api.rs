//! The `ApiPodSource` actor: managed mode's source of pods, as upstream's API server source.
//! It watches the pods bound to this node ([`node_pods`]: `spec.nodeName=<node>`, every
//! namespace), which lists, watches from the list's resource version, resumes after a
//! disconnect, lists again after an expired one (410), and backs off between failures briefly
//! enough that pods bound during an API server outage start within seconds of its return.
//! The whole view is published as the API source's snapshot after every change.

use actix::{Actor, AsyncContext, Context, StreamHandler};
use kube::Client;
use sergeant_messages::pods::{RejectedManifest, SourceSnapshot};
use tokio::sync::watch;

use sergeant_kube_api::ApiStore;
use sergeant_kube_api::{node_pods, PodWatchItem};
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, ChildSpec, Slot};

const METRIC: &str = "sergeant_api_pods";

/// Managed mode's source of pods: the pods the API server binds to this node.
pub struct ApiPodSource {
    env: ChildEnv,
    client: Client,
    node: String,
    out: watch::Sender<SourceSnapshot>,
    store: ApiStore,
}

impl ApiPodSource {
    /// A source watching the pods of node `node` through `client`, publishing on `out`.
    #[must_use]
    pub fn new(
        env: &ChildEnv,
        client: Client,
        node: String,
        out: watch::Sender<SourceSnapshot>,
    ) -> Self {
        Self {
            env: env.clone(),
            client,
            node,
            out,
            store: ApiStore::default(),
        }
    }

    /// Publishes the view if it differs from the one out there; logs each new rejection once.
    fn publish(&self) {
        let next = self.store.snapshot();
        let previous: Vec<RejectedManifest> = self.out.borrow().rejected.clone();
        for rejected in next.rejected.iter().filter(|r| !previous.contains(r)) {
            tracing::warn!(pod = %rejected.origin, "API pod rejected: {}", rejected.error);
        }
        metrics::gauge!(METRIC, "state" => "accepted").set(next.pods.len() as f64);
        metrics::gauge!(METRIC, "state" => "rejected").set(next.rejected.len() as f64);
        self.env.set_status(format!(
            "watching the pods of node {}: {} pods, {} rejected",
            self.node,
            next.pods.len(),
            next.rejected.len()
        ));
        self.out.send_if_modified(|current| {
            let same = current.synced == next.synced
                && current.pods == next.pods
                && current.rejected == next.rejected;
            if !same {
                *current = next;
            }
            !same
        });
    }
}

impl Actor for ApiPodSource {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::describe_gauge!(
            METRIC,
            "Pods the API server binds to this node, by state (accepted or rejected)."
        );
        self.env.set_status(format!(
            "listing the pods of node {} (not synced yet)",
            self.node
        ));
        ctx.add_stream(node_pods(self.client.clone(), &self.node));
    }
}

impl StreamHandler<PodWatchItem> for ApiPodSource {
    fn handle(&mut self, event: PodWatchItem, ctx: &mut Context<Self>) {
        if let Err(fault) = failpoint::check("api-source::event") {
            return self.env.fail(ctx, fault);
        }
        match event {
            Ok(event) => {
                if self.store.apply(event) {
                    self.publish();
                }
            }
            Err(err) => {
                tracing::warn!("watching pods failed, retrying with back-off: {err}");
                let synced = if self.store.synced() {
                    "keeping the pods last seen"
                } else {
                    "not synced yet"
                };
                self.env.set_status(format!(
                    "watching the pods of node {} failed ({synced}), retrying: {err}",
                    self.node
                ));
            }
        }
    }
}

/// The `api-source` child of the `pods` supervisor: watches the pods of node `node` through
/// `client` and publishes them on `out`, which outlives its restarts (so the pod manager keeps
/// the last view while a new incarnation lists again).
#[must_use]
pub fn api_child_spec(
    client: Client,
    node: String,
    out: watch::Sender<SourceSnapshot>,
) -> ChildSpec {
    ChildSpec::worker("api-source", &Slot::new("api-source"), move |env| {
        ApiPodSource::new(env, client.clone(), node.clone(), out.clone())
    })
}
