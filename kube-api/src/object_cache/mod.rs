//! The config maps and secrets pods read, kept as `configMapAndSecretChangeDetectionStrategy`
//! says, as upstream's secret and config map managers: each pod actor is an [`ObjectUser`]
//! that registers the objects its pod refers to whenever it syncs the pod and unregisters
//! them when it goes ([`registry`] counts the users of each object), and reads them through
//! the [`ObjectCache`]:
//!
//! - `Watch` (the default): one watch per object in use ([`watch`]), started by its first
//!   user and dropped with its last; reads answer from what the watch saw, wait (up to
//!   [`FIRST_LIST_WAIT`], as upstream) for its first list, and ask the API server while the
//!   watch fails, falling back to what it saw last when that fails too.
//! - `Cache`: a read answers from the last one while it is younger than the node's TTL
//!   ([`ttl`]), else asks the API server.
//! - `Get`: every read asks the API server.
//!
//! The services whose variables containers get, and the RuntimeClasses whose handlers run
//! pods' sandboxes, are read from one watch of every object of their kind ([`every`]),
//! whatever the strategy, as upstream's informers.

mod every;
mod registry;
mod runtime_classes;
mod services;
mod ttl;
mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::{Api, Client};
use sergeant_config::kubelet::ChangeDetectionStrategy;
use sergeant_core::runtime_class::RuntimeClassError;
use sergeant_core::spec::{ApiRequest, ObjectData, ObjectError, ObjectKind};

use self::every::Every;
use self::registry::Registry;
use self::watch::{answer, follow, Answer, Seen};
use crate::failure::api_failure;
use crate::forbidden::retry_forbidden;
pub use ttl::node_ttl;
use ttl::DEFAULT_TTL;
use watch::WATCHES_METRIC;

/// How long a read waits for a new watch's first list before it asks the API server itself
/// (upstream waits a second, then fails the read).
pub const FIRST_LIST_WAIT: Duration = Duration::from_secs(1);
/// How long a read of an object whose watch is failing waits for the API server before it
/// answers with what the watch saw last: a sync that has the object already never waits
/// long on an API server that is away.
const STALE_GET_WAIT: Duration = Duration::from_secs(2);

/// One config map or secret as a pod reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Its keys: a config map's `data` and `binaryData`, a secret's `data`.
    pub data: ObjectData,
    /// A secret's `type` (pull secrets are read by it).
    pub secret_type: Option<String>,
    /// Whether it is marked `immutable`.
    pub immutable: bool,
}

/// Which object: kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ObjectKey {
    kind: ObjectKind,
    namespace: String,
    name: String,
}

/// The node's config maps and secrets, read for its pods as the strategy says. Cloned cheaply:
/// every clone shares the same watches and cache.
#[derive(Clone)]
pub struct ObjectCache {
    shared: Arc<Shared>,
}

struct Shared {
    client: Client,
    strategy: ChangeDetectionStrategy,
    state: Mutex<State>,
    next_user: AtomicU64,
    /// The TTL the Node's annotation gives (`Cache`), as node status last read it.
    node_ttl: Mutex<Option<Duration>>,
    /// The watched services, started by the first read of them.
    services: OnceLock<Every<Service>>,
    /// The watched RuntimeClasses, started by the first pod that names one.
    runtime_classes: OnceLock<Every<RuntimeClass>>,
}

#[derive(Default)]
struct State {
    registry: Registry<ObjectKey>,
    /// `Watch`: the watch of each object in use.
    watches: BTreeMap<ObjectKey, Watched>,
    /// `Cache`: the last read of each object in use, and when it was made.
    cached: BTreeMap<ObjectKey, (Option<Fetched>, Instant)>,
}

/// A running watch: what it saw, and its task, aborted when it is dropped.
struct Watched {
    seen: tokio::sync::watch::Receiver<Seen>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ObjectCache {
    /// Reads through `client` as `strategy` says. Starts nothing until a user registers.
    #[must_use]
    pub fn new(client: Client, strategy: ChangeDetectionStrategy) -> Self {
        metrics::describe_gauge!(
            WATCHES_METRIC,
            "Watches of config maps and secrets running, by kind (configmap, secret): one per \
             object pods use under the Watch strategy, none once the last pod using it is gone"
        );
        Self {
            shared: Arc::new(Shared {
                client,
                strategy,
                state: Mutex::new(State::default()),
                next_user: AtomicU64::new(0),
                node_ttl: Mutex::new(None),
                services: OnceLock::new(),
                runtime_classes: OnceLock::new(),
            }),
        }
    }

    /// A new user (one per pod actor): what it registers stays in use until it is dropped.
    #[must_use]
    pub fn user(&self) -> ObjectUser {
        ObjectUser {
            cache: self.clone(),
            id: self.shared.next_user.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The TTL the Node's `node.alpha.kubernetes.io/ttl` annotation gives, or `None` without
    /// one (see [`node_ttl`]); node status calls it with each Node it reads.
    pub fn set_node_ttl(&self, ttl: Option<Duration>) {
        *self
            .shared
            .node_ttl
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = ttl;
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `user` now uses exactly `keys`: watches start for objects new in use and stop (or
    /// cached reads are forgotten) for those no longer used.
    fn register(&self, user: u64, keys: BTreeSet<ObjectKey>) {
        if self.shared.strategy == ChangeDetectionStrategy::Get {
            return;
        }
        let mut state = self.state();
        let changes = state.registry.register(user, keys);
        for key in changes.dropped {
            state.watches.remove(&key);
            state.cached.remove(&key);
        }
        if self.shared.strategy == ChangeDetectionStrategy::Watch {
            for key in changes.added {
                let watched = self.watch(&key);
                state.watches.insert(key, watched);
            }
        }
    }

    /// `user` is gone.
    fn unregister(&self, user: u64) {
        let mut state = self.state();
        for key in state.registry.unregister(user) {
            state.watches.remove(&key);
            state.cached.remove(&key);
        }
    }

    /// Starts the watch of `key`.
    fn watch(&self, key: &ObjectKey) -> Watched {
        let (sender, seen) = tokio::sync::watch::channel(Seen::default());
        let (client, namespace) = (self.shared.client.clone(), key.namespace.as_str());
        let name = key.name.clone();
        let noun = key.kind.noun();
        let task = match key.kind {
            ObjectKind::ConfigMap => tokio::spawn(follow(
                Api::<ConfigMap>::namespaced(client, namespace),
                noun,
                name,
                from_config_map,
                sender,
            )),
            ObjectKind::Secret => tokio::spawn(follow(
                Api::<Secret>::namespaced(client, namespace),
                noun,
                name,
                from_secret,
                sender,
            )),
        };
        Watched { seen, task }
    }

    /// The object `key` (`None` when it does not exist), as the strategy reads it.
    async fn read(&self, key: &ObjectKey) -> Result<Option<Fetched>, ObjectError> {
        match self.shared.strategy {
            ChangeDetectionStrategy::Get => get(&self.shared.client, key).await,
            ChangeDetectionStrategy::Cache => self.read_cached(key).await,
            ChangeDetectionStrategy::Watch => self.read_watched(key).await,
        }
    }

    /// `Cache`: the last read while it is fresh, else a new one (kept while the object is in
    /// use).
    async fn read_cached(&self, key: &ObjectKey) -> Result<Option<Fetched>, ObjectError> {
        let ttl = self
            .shared
            .node_ttl
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or(DEFAULT_TTL);
        let now = Instant::now();
        if let Some((object, _)) = self
            .state()
            .cached
            .get(key)
            .filter(|(_, fetched)| ttl::is_fresh(*fetched, ttl, now))
        {
            return Ok(object.clone());
        }
        let object = get(&self.shared.client, key).await?;
        let mut state = self.state();
        if state.registry.is_used(key) {
            state.cached.insert(key.clone(), (object.clone(), now));
        }
        Ok(object)
    }

    /// `Watch`: what the object's watch saw (see [`Answer`]); an object nobody registered is
    /// read from the API server.
    async fn read_watched(&self, key: &ObjectKey) -> Result<Option<Fetched>, ObjectError> {
        let seen = self.state().watches.get(key).map(|w| w.seen.clone());
        let Some(mut seen) = seen else {
            return get(&self.shared.client, key).await;
        };
        let mut now = answer(&seen.borrow());
        if now == Answer::Wait {
            // Ends early when the watch lists or fails; a watch that ended has answered.
            let _ = tokio::time::timeout(
                FIRST_LIST_WAIT,
                seen.wait_for(|seen| answer(seen) != Answer::Wait),
            )
            .await;
            now = answer(&seen.borrow());
        }
        match now {
            Answer::Stored(object) => Ok(object),
            Answer::Wait | Answer::Get { stale: None } => get(&self.shared.client, key).await,
            Answer::Get { stale: Some(stale) } => {
                match tokio::time::timeout(STALE_GET_WAIT, get(&self.shared.client, key)).await {
                    Ok(Ok(object)) => Ok(object),
                    Ok(Err(error)) => {
                        tracing::debug!("{error}: answering with what the watch saw last");
                        Ok(stale)
                    }
                    Err(_) => Ok(stale),
                }
            }
        }
    }
}

/// One pod actor's use of the [`ObjectCache`]: the objects it registered stay in use until it
/// is dropped.
pub struct ObjectUser {
    cache: ObjectCache,
    id: u64,
}

impl ObjectUser {
    /// The pod's config maps and secrets (by kind and name, in `namespace`) are `objects` now.
    pub fn register(&self, namespace: &str, objects: &BTreeSet<(ObjectKind, String)>) {
        let keys = objects
            .iter()
            .map(|(kind, name)| ObjectKey {
                kind: *kind,
                namespace: namespace.to_owned(),
                name: name.clone(),
            })
            .collect();
        self.cache.register(self.id, keys);
    }

    /// The object `kind` `namespace/name`; `None` when it does not exist.
    ///
    /// # Errors
    /// [`ObjectError::Api`]: why it could not be read (the API server's answer, naming the
    /// object).
    pub async fn read(
        &self,
        kind: ObjectKind,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Fetched>, ObjectError> {
        self.cache
            .read(&ObjectKey {
                kind,
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            })
            .await
    }
}

impl ObjectUser {
    /// The services of `namespace` (none unless `list`) and `default/kubernetes`, from the
    /// watch of every service; `None` while its first list is not in a second after the
    /// watch started (then the caller asks the API server).
    pub async fn services(
        &self,
        namespace: &str,
        list: bool,
    ) -> Option<(Vec<Service>, Option<Service>)> {
        let shared = &self.cache.shared;
        let every = shared
            .services
            .get_or_init(|| Every::start(shared.client.clone()));
        services::services(every, namespace, list, FIRST_LIST_WAIT).await
    }

    /// The handler of the RuntimeClass `name`, from the watch of every RuntimeClass (started
    /// by the first pod that names one), waiting up to a second after it started for its
    /// first list.
    ///
    /// # Errors
    /// No RuntimeClass of that name, or none listed yet (see [`RuntimeClassError`]).
    pub async fn runtime_handler(&self, name: &str) -> Result<String, RuntimeClassError> {
        let shared = &self.cache.shared;
        let every = shared
            .runtime_classes
            .get_or_init(|| Every::start(shared.client.clone()));
        runtime_classes::handler(every, name, FIRST_LIST_WAIT).await
    }
}

impl Drop for ObjectUser {
    fn drop(&mut self) {
        self.cache.unregister(self.id);
    }
}

/// Reads `key` from the API server; `None` when it does not exist. A refusal of the Node
/// authorizer that has not seen the pod's binding yet is retried first.
async fn get(client: &Client, key: &ObjectKey) -> Result<Option<Fetched>, ObjectError> {
    let ObjectKey {
        kind,
        namespace,
        name,
    } = key;
    let request = ApiRequest::Read {
        kind: *kind,
        namespace: namespace.clone(),
        name: name.clone(),
    };
    let what = request.to_string();
    let failed = |e: kube::Error| ObjectError::Api {
        failure: api_failure(&e),
        request: request.clone(),
    };
    Ok(match kind {
        ObjectKind::ConfigMap => {
            let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
            retry_forbidden(&what, || api.get_opt(name))
                .await
                .map_err(failed)?
                .map(from_config_map)
        }
        ObjectKind::Secret => {
            let api = Api::<Secret>::namespaced(client.clone(), namespace);
            retry_forbidden(&what, || api.get_opt(name))
                .await
                .map_err(failed)?
                .map(from_secret)
        }
    })
}

/// A config map's `data` and `binaryData` as one map of bytes.
fn from_config_map(config_map: ConfigMap) -> Fetched {
    let text = config_map
        .data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value.into_bytes()));
    let binary = config_map
        .binary_data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value.0));
    Fetched {
        data: text.chain(binary).collect(),
        secret_type: None,
        immutable: config_map.immutable == Some(true),
    }
}

/// A secret's `data` and `type`.
fn from_secret(secret: Secret) -> Fetched {
    Fetched {
        data: secret
            .data
            .into_iter()
            .flatten()
            .map(|(key, value)| (key, value.0))
            .collect(),
        secret_type: secret.type_,
        immutable: secret.immutable == Some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn config_maps_merge_text_and_binary_keys() {
        let config_map = ConfigMap {
            data: Some([("a".to_owned(), "text".to_owned())].into()),
            binary_data: Some([("b".to_owned(), ByteString(vec![0, 255]))].into()),
            immutable: Some(true),
            ..ConfigMap::default()
        };
        let fetched = from_config_map(config_map);
        assert_eq!(fetched.data["a"], b"text");
        assert_eq!(fetched.data["b"], [0, 255]);
        assert!(fetched.immutable);
    }

    #[test]
    fn secrets_keep_their_type() {
        let secret = Secret {
            data: Some([("k".to_owned(), ByteString(b"v".to_vec()))].into()),
            type_: Some("kubernetes.io/dockerconfigjson".to_owned()),
            ..Secret::default()
        };
        let fetched = from_secret(secret);
        assert_eq!(fetched.data["k"], b"v");
        assert_eq!(
            fetched.secret_type.as_deref(),
            Some("kubernetes.io/dockerconfigjson")
        );
        assert!(!fetched.immutable);
    }
}
