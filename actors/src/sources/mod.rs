//! Pod sources: where the pods that belong on this node come from.
//!
//! [`ApiPodSource`] is managed mode's source: the pods the API server binds to this node,
//! each decoded and checked alone ([`api_pod`]). [`StaticPodSource`] is the static pod source,
//! standalone mode's only one — the actor that turns the manifests in `staticPodPath` (read by
//! `sergeant_host::static_pods`) into the file source's [`SourceSnapshot`] for the pod manager,
//! as upstream's static pod file source does. [`load_static_pod`] is the same conversion for
//! one file (parse strictly, validate, apply the static pod identity and defaults), and
//! [`Rejection`] is how a manifest that cannot become a pod is explained: one line per problem
//! naming the file, line, field and reason. Everything read here is treated as hostile: files
//! are read up to a size cap, parsed at a cost linear in their size, and pods from either
//! source are held to upstream's validation and to the bounds of `limits`.
//!
//! [`SourceSnapshot`]: sergeant_messages::pods::SourceSnapshot

mod actor;
mod api;

pub use actor::StaticPodSource;
pub use api::{api_child_spec, ApiPodSource};
