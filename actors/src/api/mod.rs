//! The API server side of managed mode. [`client_from_kubeconfig`] builds the one client every
//! actor that talks to the control plane shares (node status and lease, the API pod source,
//! the status manager, events, the pod actors' reads of config maps, secrets and tokens with
//! [`fetch_pod_objects`]); without `--kubeconfig` sergeant is standalone and none of them run.

mod client;
mod pod_objects;
mod token;

pub use client::{client_from_kubeconfig, ApiClientError};
pub use pod_objects::fetch_pod_objects;
pub use token::TokenCache;
