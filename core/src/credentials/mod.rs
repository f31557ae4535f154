//! Registry credentials for image pulls from the pod's `spec.imagePullSecrets`, decided as the
//! upstream kubelet decides them: the secrets ([`docker_config`]: `kubernetes.io/dockerconfigjson`
//! and `kubernetes.io/dockercfg`) make a keyring ([`keyring`]) matched against the image's
//! registry and repository ([`reference`]). Entry point: [`PodKeyring`], the credentials that
//! match one image, in the order a pull tries them. The pull itself is the pod actor's.

pub mod docker_config;
pub mod keyring;
mod pod_keyring;
pub mod reference;

pub use pod_keyring::{PodKeyring, SecretUnavailable};
