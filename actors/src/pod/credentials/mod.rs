//! Registry credentials for image pulls from the pod's `spec.imagePullSecrets`, as the
//! upstream kubelet uses them: the secrets ([`docker_config`]: `kubernetes.io/dockerconfigjson`
//! and `kubernetes.io/dockercfg`) make a keyring ([`keyring`]) matched against the image's
//! registry and repository ([`reference`]); [`pull_image`] tries the matching credentials in
//! order. The secrets themselves are fetched with the pod's other API objects
//! ([`sergeant_core::spec::PodObjects`]).

pub mod docker_config;
pub mod keyring;
mod pod_keyring;
mod pull;
pub mod reference;

pub use pod_keyring::PodKeyring;
pub use pull::pull_image;
