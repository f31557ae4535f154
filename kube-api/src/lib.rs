//! sergeant's side of the API server (managed mode). [`client_from_kubeconfig`] builds the one client every
//! actor that talks to the control plane shares (node status and lease, the API pod source,
//! the status manager, events, the pod actors' reads of config maps, secrets and tokens with
//! [`fetch_pod_objects`], config maps and secrets kept by the [`ObjectCache`] as
//! `configMapAndSecretChangeDetectionStrategy` says), on one HTTP/2 connection (`transport`);
//! without `--kubeconfig` sergeant is standalone and none of them run.
//! [`node_pods`] is the watch of the node's pods; [`cached_node`] reads the node's Node. Retries against the API server are paced by
//! one jittered, bounded back-off, core's [`RetryBackoff`]; reads the Node authorizer refuses
//! for a moment after a pod is bound are retried before they count as failures (`forbidden`).
//! Each watched pod object is decoded and checked alone ([`pod_object::convert`]) into a view
//! that a relist replaces only once complete ([`ApiStore`], over the [`RelistView`] every watched
//! view shares); the mirror pods among the node's pods are kept the same way ([`MirrorStore`]).
//!
//! [`RetryBackoff`]: sergeant_core::backoff::RetryBackoff

mod client;
mod failure;
mod forbidden;
pub mod mirror_store;
mod node;
mod object_cache;
pub mod pod_object;
mod pod_objects;
mod pod_store;
mod relist;
mod throttle;
mod token;
mod transport;
mod watch;

pub use client::{client_from_kubeconfig, ApiClientError};
pub use mirror_store::MirrorStore;
pub use node::cached_node;
pub use object_cache::{node_ttl, Fetched, ObjectCache, ObjectUser};
pub use pod_objects::fetch_pod_objects;
pub use pod_store::ApiStore;
pub use relist::{RelistView, WatchEntries};
pub use throttle::{ApiRateLimit, REQUESTS_METRIC};
pub use token::TokenCache;
pub use watch::{node_pods, PodWatchItem};
