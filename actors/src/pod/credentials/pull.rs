//! Pulling an image with the pod's registry credentials, as upstream: each credential that
//! applies to the image is tried, the most specific first, until one pull succeeds; with none
//! that applies, the pull goes without. Pull secrets that could not be read are reported in a
//! `FailedToRetrieveImagePullSecret` event and do not stop the pull.

use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::events::EventType::Warning;
use crate::events::{pod_event, reason};
use crate::runtime::RuntimePort;
use sergeant_core::credentials::docker_config::encode_auth;
use sergeant_core::credentials::keyring::Credential;
use sergeant_core::credentials::reference::repository;
use sergeant_core::credentials::PodKeyring;
use sergeant_core::spec::PodObjects;

/// Why a pull failed: the runtime's error, or, when several credentials were tried, each one's
/// in order. Its Display is the pull's failure message (`Failed to pull image "…": …` and the
/// container's `ErrImagePull`): the one error, or all of them as `[a, b]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PullError {
    /// The pull (without credentials, or with the one credential that applies) failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The pull failed with each of the credentials that apply, tried in this order.
    #[error("[{}]", join(.0))]
    EachCredential(Vec<RuntimeError>),
}

fn join(errors: &[RuntimeError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Pulls `image` for `pod` with the credentials of its pull secrets in `objects`.
///
/// # Errors
/// [`PullError`]: the runtime's error; when several credentials were tried, all their errors
/// in order.
pub async fn pull_image(
    port: &RuntimePort,
    image: &cri::ImageSpec,
    sandbox_config: &cri::PodSandboxConfig,
    pod: &Pod,
    objects: &PodObjects,
) -> Result<cri::PullImageResponse, PullError> {
    let ring = PodKeyring::of(pod, objects);
    report(&ring);
    let credentials = ring.keyring.lookup(&repository(&image.image));
    let request = |auth: Option<cri::AuthConfig>| cri::PullImageRequest {
        image: Some(image.clone()),
        auth,
        sandbox_config: Some(sandbox_config.clone()),
    };
    let image = image.image.as_str();
    if credentials.is_empty() {
        return Ok(port.call(request(None)).await?);
    }
    let mut errors = Vec::with_capacity(credentials.len());
    for credential in credentials {
        tracing::debug!(
            image,
            secret = credential.source,
            username = credential.username,
            "pulling with the credentials of a pull secret"
        );
        match port.call(request(Some(auth_config(credential)))).await {
            Ok(pulled) => return Ok(pulled),
            Err(err) => {
                tracing::info!(image, secret = credential.source, error = %err, "pull with these credentials failed");
                errors.push(err);
            }
        }
    }
    Err(match <[RuntimeError; 1]>::try_from(errors) {
        Ok([one]) => PullError::Runtime(one),
        Err(all) => PullError::EachCredential(all),
    })
}

/// The CRI form of `credential`. No server address: the runtime may reach the registry
/// under another name (a mirror), and would then drop credentials bound to one.
fn auth_config(credential: &Credential) -> cri::AuthConfig {
    cri::AuthConfig {
        username: credential.username.clone(),
        password: credential.password.clone(),
        auth: encode_auth(&credential.username, &credential.password),
        ..Default::default()
    }
}

/// Logs what of the pod's pull secrets is unusable, and names the secrets that could not be
/// read in upstream's event.
fn report(ring: &PodKeyring) {
    for error in &ring.malformed {
        tracing::warn!(%error, "skipping part of an image pull secret");
    }
    if ring.unavailable.is_empty() {
        return;
    }
    for (name, why) in &ring.unavailable {
        tracing::warn!(
            secret = name,
            reason = why.to_string(),
            "image pull secret not available; pulling without it"
        );
    }
    let names: Vec<&str> = ring.unavailable.iter().map(|(n, _)| n.as_str()).collect();
    let message = format!(
        "Unable to retrieve some image pull secrets ({}); attempting to pull the image may not succeed.",
        names.join(", ")
    );
    pod_event(
        Warning,
        reason::FAILED_TO_RETRIEVE_IMAGE_PULL_SECRET,
        message,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_is_the_runtimes_words_and_several_are_listed_in_order() {
        let refused = |message: &str| RuntimeError::Unavailable {
            operation: "pull_image",
            message: message.to_owned(),
        };
        let one = PullError::from(refused("denied"));
        assert_eq!(one.to_string(), refused("denied").to_string());
        let each = PullError::EachCredential(vec![refused("a"), refused("b")]);
        assert_eq!(
            each.to_string(),
            format!("[{}, {}]", refused("a"), refused("b"))
        );
    }
}
