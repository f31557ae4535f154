//! Translating a pod spec into what the runtime and the node need: the CRI sandbox
//! configuration ([`sandbox_config`]), one CRI container configuration per container
//! ([`container_config`]), the pod cgroup ([`pod_cgroup_parent`], [`ensure_pod_cgroup`]) and
//! the termination-log file ([`prepare_termination_log`]), log directory
//! ([`prepare_container_log_dir`]) and managed `/etc/hosts` ([`prepare_hosts_file`]).
//!
//! Everything here is a function of the pod, a [`NodeContext`] and the [`PodObjects`] (config
//! maps, secrets, tokens) the sync step fetched beforehand, so the pod actor can call it on
//! every sync and get the same answer. The few functions that touch the host say so; the pod
//! sync runs them through [`crate::pod::file_work`].

mod cgroup;
mod container;
mod dns;
mod env;
mod env_refs;
mod error;
mod expand;
mod hosts;
mod identity;
mod logs;
pub(crate) mod mountinfo;
mod mounts;
mod node;
mod objects;
mod qos;
mod quantity;
mod resource_ref;
mod resources;
mod sandbox;
mod security;
#[cfg(test)]
pub(crate) mod test_pods;

pub use cgroup::{ensure_pod_cgroup, pod_cgroup_parent, remove_pod_cgroup};
pub use container::{container_config, ContainerSetup};
pub use error::SpecError;
pub use hosts::{prepare_hosts_file, HOSTS_FILE};
pub use logs::prepare_container_log_dir;
pub use mounts::prepare_termination_log;
pub(crate) use node::pod_dir_in;
pub use node::NodeContext;
pub use objects::{references, ObjectData, ObjectKind, PodObjects, References, TokenKey};
pub use qos::{qos_class, QosClass};
pub use sandbox::sandbox_config;

pub(crate) use env::{field_value, EnvSources};
pub(crate) use error::io_reason;
pub(crate) use identity::{is_safe_path_component, PodIdentity};
pub(crate) use objects::{service_account, token_key};
pub(crate) use resource_ref::resource_value;
