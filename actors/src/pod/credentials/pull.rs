//! Pulling an image with the pod's registry credentials, as upstream: each credential that
//! applies to the image is tried, the most specific first, until one pull succeeds; with none
//! that applies, the pull goes without. Pull secrets that could not be read are reported in a
//! `FailedToRetrieveImagePullSecret` event and do not stop the pull.

use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;

use crate::events::EventType::Warning;
use crate::events::{pod_event, reason};
use crate::runtime::RuntimePort;
use sergeant_core::credentials::docker_config::encode_auth;
use sergeant_core::credentials::keyring::Credential;
use sergeant_core::credentials::reference::repository;
use sergeant_core::credentials::PodKeyring;
use sergeant_core::spec::PodObjects;

/// Pulls `image` for `pod` with the credentials of its pull secrets in `objects`.
///
/// # Errors
/// The runtime's error; when several credentials were tried, all their errors in order.
pub async fn pull_image(
    port: &RuntimePort,
    image: &cri::ImageSpec,
    sandbox_config: &cri::PodSandboxConfig,
    pod: &Pod,
    objects: &PodObjects,
) -> Result<cri::PullImageResponse, String> {
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
        return port.call(request(None)).await.map_err(|e| e.to_string());
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
                errors.push(err.to_string());
            }
        }
    }
    Err(match errors.as_slice() {
        [one] => one.clone(),
        all => format!("[{}]", all.join(", ")),
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
