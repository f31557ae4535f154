//! Runtime adapters of sergeant: what sits between the kubelet's actors and a container runtime.
//!
//! Each adapter is an actor answering the runtime port (`RuntimeCall` from
//! `sergeant-messages`): [`cri::CriAdapter`] drives a real CRI runtime (containerd, CRI-O)
//! through [`cri::CriClient`], whose every call has a deadline, is counted in the upstream
//! `kubelet_runtime_operations_*` metrics and fails with an error the caller can act on;
//! [`fake::FakeAdapter`] answers from memory, for hollow nodes and scale tests.
//!
//! With the `failpoints` feature, the failpoints `cri::call` and `fake::call` fail calls on
//! demand.

#![warn(missing_docs)]

pub mod cri;
pub mod fake;
