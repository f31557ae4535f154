//! A manifest's text and the problems found in it, located: [`Manifest`] ties a file's name to
//! its text, [`ManifestError`] names the file, line, field and reason of one problem, and
//! [`Rejection`] gathers the problems that kept a manifest from becoming a pod. Lines come from
//! one bounded pass over the YAML parser's events ([`outline`], on [`libyaml`]), which is also
//! what the static manifest decoder ([`crate::manifest`]) reads. Below both the decoder and the
//! pod checks ([`crate::validate`]), which report through it.

mod error;
pub(crate) mod libyaml;
pub(crate) mod outline;

pub use error::{join_problems, ManifestError, Rejection};
pub(crate) use error::{FieldPath, Manifest, Segment};
