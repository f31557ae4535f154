//! Translating a pod spec into what the runtime and the node need: the CRI sandbox
//! configuration ([`sandbox_config`]), one CRI container configuration per container
//! ([`container_config`]), its image as the image service is asked about it ([`image_spec`]),
//! the pod cgroup ([`pod_cgroup_parent`]), the termination-log file ([`termination_log_file`]),
//! log directory ([`container_log_dir`]) and managed `/etc/hosts` ([`hosts_file`]). On a
//! Windows node ([`NodeOs::Windows`]) the CRI configurations carry their [`windows`] halves
//! instead of cgroups and Linux security settings.
//!
//! Everything here is a function of the pod, a [`NodeContext`] and the [`PodObjects`] (config
//! maps, secrets, tokens, linked services) the sync step fetched beforehand, so the pod actor can call it on
//! every sync and get the same answer. Those inputs, with the pod's identity, the downward API
//! and [`SpecError`], live in [`crate::context`] (re-exported here), which the volume plan
//! ([`crate::volumes`]) reads too; the container mounts read the volume plan. Nothing here
//! touches the host: `sergeant_host` makes the cgroup, the files and the volumes real.

mod cgroup;
mod container;
mod dns;
mod env;
mod env_refs;
mod expand;
mod hosts;
mod image;
mod logs;
mod mount_path;
mod mounts;
mod pod_resources;
pub(crate) mod profiles;
mod qos;
mod qos_cgroups;
mod quantity;
mod resources;
mod sandbox;
mod security;
mod service_env;
mod target;
pub mod windows;

pub use crate::context::{
    field_value, io_reason, is_safe_path_component, linked_services, pod_dir_in, references,
    resource_value, service_account, token_key, ApiFailure, ApiFailureKind, ApiRequest, EnvSources,
    LinkedPort, LinkedService, NodeContext, NodeOs, ObjectData, ObjectError, ObjectKind,
    PodIdentity, PodObjects, References, ResourceRefError, SpecError, TokenKey,
};
pub use cgroup::{
    managed_pod_cgroup, pod_cgroup_parent, pod_cgroup_resources, pods_cgroup, PodCgroupResources,
};
pub use container::{check_image_user, container_config, ContainerSetup};
pub use hosts::{hosts_file, HOSTS_FILE};
pub use image::{image_spec, NodeImage};
pub use logs::container_log_dir;
pub use mounts::termination_log_file;
pub use pod_resources::{
    amount, binary, memory_request_bytes, milli, pod_level, pod_limits, pod_requests, to_list,
    units, without_pod_level, Totals,
};
pub use qos::{qos_class, QosClass};
pub use qos_cgroups::{qos_cgroups, NodeCgroup};
pub use resources::container_resources;
pub use sandbox::sandbox_config;
pub use security::ImageUser;
pub use target::join_target_pid_namespace;
