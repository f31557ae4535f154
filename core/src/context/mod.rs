//! What the pure translations of a pod ([`crate::spec`], [`crate::volumes`]) read besides its
//! spec: who the pod is ([`PodIdentity`]), the node it runs on ([`NodeContext`], [`NodeOs`]),
//! the API objects the sync step fetched for it ([`PodObjects`]: config maps, secrets, tokens,
//! the services it links to) and why one could not be read ([`ObjectError`]), the downward API
//! answered from them ([`field_value`], [`resource_value`]); and the error that names the pod
//! and the field at fault ([`SpecError`]). `spec` re-exports its public items under the names
//! other crates use.

mod downward;
mod error;
mod identity;
mod node;
mod node_os;
mod object_error;
mod objects;
mod resource_ref;
mod services;

pub use downward::{field_value, EnvSources};
pub use error::{io_reason, SpecError};
pub(crate) use identity::all_containers;
pub use identity::{is_safe_path_component, PodIdentity};
pub use node::{pod_dir_in, NodeContext};
pub use node_os::NodeOs;
pub use object_error::{ApiFailure, ApiFailureKind, ApiRequest, ObjectError};
pub use objects::{
    references, service_account, token_key, ObjectData, ObjectKind, PodObjects, References,
    TokenKey,
};
pub use resource_ref::{resource_value, ResourceRefError};
pub use services::{linked_services, LinkedPort, LinkedService};
