//! One watch of every object of a kind (as upstream's informers), started by the first read
//! that needs it: the services whose variables containers get, the RuntimeClasses that name
//! pods' runtime handlers. Once its first list is in, a read answers from it and never waits
//! on the API server, also while the API server is away (the store keeps the last state it
//! saw).

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use crate::watch::paced;
use sergeant_core::backoff::RetryBackoff;

/// The first step between two attempts after a failure, as the pod watch's.
const RETRY_FIRST: Duration = Duration::from_millis(250);
/// The largest step (see [`RetryBackoff`]).
const RETRY_MAX: Duration = Duration::from_secs(5);

/// The watched objects of kind `K`, and the task that keeps them (aborted when dropped).
pub(super) struct Every<K>
where
    K: Resource + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    store: Store<K>,
    task: tokio::task::JoinHandle<()>,
    started: tokio::time::Instant,
}

impl<K> Every<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    /// Starts watching every object of kind `K` through `client`.
    pub(super) fn start(client: Client) -> Self {
        let (store, writer) = reflector::store();
        let events = paced(
            watcher(Api::<K>::all(client), watcher::Config::default()),
            RetryBackoff::new(RETRY_FIRST, RETRY_MAX),
        );
        let task = tokio::spawn(reflector::reflector(writer, events).for_each(|item| {
            if let Err(error) = item {
                tracing::debug!(kind = %K::kind(&()), "watch failed: {error}");
            }
            futures::future::ready(())
        }));
        Self {
            store,
            task,
            started: tokio::time::Instant::now(),
        }
    }

    /// The store once its first list is in; `None` when it is not within `wait` of the start
    /// (later reads wait no more: a watch that cannot list does not slow every sync down).
    pub(super) async fn ready(&self, wait: Duration) -> Option<&Store<K>> {
        tokio::time::timeout_at(self.started + wait, self.store.wait_until_ready())
            .await
            .ok()?
            .ok()?;
        Some(&self.store)
    }
}

impl<K> Drop for Every<K>
where
    K: Resource + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    fn drop(&mut self) {
        self.task.abort();
    }
}
