//! Every message type that crosses an actor boundary in sergeant, and the small domain types
//! they carry.
//!
//! This crate has no logic and does no I/O: it is the vocabulary the actors share. Start with
//! [`supervision`] for the messages about the supervision tree itself, and [`runtime`] for the
//! runtime port every adapter answers.

/// The Kubernetes release sergeant acts as the kubelet of (the control plane the tests run is
/// built from the same release, `tests/control-plane/VERSION`).
pub const KUBERNETES_VERSION: &str = "v1.37.2";
/// Its `major.minor`, as user agents such as `kube-probe/1.37` carry it.
pub const KUBERNETES_MINOR: &str = "1.37";

pub mod container_events;
pub mod pods;
pub mod runtime;
pub mod runtime_error;
pub mod supervision;
