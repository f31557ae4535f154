//! The API server side of managed mode. [`client_from_kubeconfig`] builds the one client every
//! actor that talks to the control plane shares (node status and lease, the API pod source,
//! the status manager, events); without `--kubeconfig` sergeant is standalone and none of them
//! run.

mod client;

pub use client::{client_from_kubeconfig, ApiClientError};
