//! Image pulls with registry credentials: [`pull_image`] tries the credentials
//! [`sergeant_core::credentials::PodKeyring`] matches for the image, in order, as the upstream
//! kubelet does. The pull secrets are fetched with the pod's other API objects
//! ([`sergeant_core::spec::PodObjects`]).

mod pull;

pub use pull::{pull_image, PullError};
