//! A static pod manifest becomes a pod, or a precise refusal.
//!
//! Entry point: [`load_static_pod`], upstream's static pod file source for one file: the text is
//! outlined in one pass over the parser's events with bounded nesting and expansion
//! ([`crate::located`]), decoded strictly with every unknown field named ([`decode`],
//! [`fields`]), held to [`crate::validate`], and given the static pod identity and defaults
//! ([`static_pod`]). A refusal is a [`Rejection`]: one [`ManifestError`] per problem, naming
//! the file, line, field and reason. Everything here treats its input as hostile: its cost is
//! linear in the input's size and bounded by [`crate::limits`].

mod decode;
mod fields;
mod static_pod;

pub use crate::located::{join_problems, ManifestError, Rejection};
pub use static_pod::{load_static_pod, static_pod_uid};

#[cfg(test)]
pub(crate) use decode::parse;
