//! The cluster's services, for the variables of pods' containers: one watch of every service
//! (as upstream's service informer), started by the first pod sync that reads them. Once its
//! first list is in, a sync answers from it and never waits on the API server, also while the
//! API server is away (the store keeps the last state it saw).

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client};

use crate::backoff::RetryBackoff;
use crate::watch::paced;

/// The first step between two attempts after a failure, as the pod watch's.
const RETRY_FIRST: Duration = Duration::from_millis(250);
/// The largest step (see [`RetryBackoff`]).
const RETRY_MAX: Duration = Duration::from_secs(5);

/// The watched services, and the task that keeps them (aborted when dropped).
pub(super) struct ServiceStore {
    store: Store<Service>,
    task: tokio::task::JoinHandle<()>,
    started: tokio::time::Instant,
}

impl ServiceStore {
    /// Starts watching every service through `client`.
    pub(super) fn start(client: Client) -> Self {
        let (store, writer) = reflector::store();
        let events = paced(
            watcher(Api::<Service>::all(client), watcher::Config::default()),
            RetryBackoff::new(RETRY_FIRST, RETRY_MAX),
        );
        let task = tokio::spawn(reflector::reflector(writer, events).for_each(|item| {
            if let Err(error) = item {
                tracing::debug!("watch of services failed: {error}");
            }
            futures::future::ready(())
        }));
        Self {
            store,
            task,
            started: tokio::time::Instant::now(),
        }
    }

    /// The services of `namespace` (none unless `list`) and `default/kubernetes`; `None` when
    /// the first list is not in within `wait` of the start (later reads wait no more: a watch
    /// that cannot list does not slow every sync down).
    pub(super) async fn services(
        &self,
        namespace: &str,
        list: bool,
        wait: Duration,
    ) -> Option<(Vec<Service>, Option<Service>)> {
        tokio::time::timeout_at(self.started + wait, self.store.wait_until_ready())
            .await
            .ok()?
            .ok()?;
        let listed = if list {
            self.store
                .state_filter(|s| s.metadata.namespace.as_deref() == Some(namespace))
                .into_iter()
                .map(|s| (*s).clone())
                .collect()
        } else {
            Vec::new()
        };
        let master = self
            .store
            .get(&ObjectRef::new("kubernetes").within("default"))
            .map(|s| (*s).clone());
        Some((listed, master))
    }
}

impl Drop for ServiceStore {
    fn drop(&mut self) {
        self.task.abort();
    }
}
