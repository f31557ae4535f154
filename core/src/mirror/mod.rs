//! Mirror pods, the API server's copies of the node's static pods, as upstream decides them:
//! which to create and which to delete ([`plan`]), and what the mirror pod of a static pod is
//! ([`pod`]). The `mirror-pods` actor watches the API and carries the actions out.

pub mod plan;
pub mod pod;
