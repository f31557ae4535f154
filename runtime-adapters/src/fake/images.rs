//! The image service of the fake runtime: a set of pulled references. Pulls succeed at once
//! unless the reference matches a "missing image" prefix; nothing is downloaded or stored.

use std::collections::BTreeSet;

use sergeant_messages::runtime::{cri, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

use super::errors::{invalid_argument, not_found};
use super::reference::{image_id, normalize, repo_digest, repo_tags};
use super::FakeRuntime;

/// The pulled images, by normalized reference, and the references no pull can find.
#[derive(Debug, Default)]
pub(super) struct ImageStore {
    pulled: BTreeSet<String>,
    missing_prefixes: Vec<String>,
}

impl ImageStore {
    /// Makes pulls of references starting with `prefix` fail.
    pub(super) fn add_missing_prefix(&mut self, prefix: String) {
        self.missing_prefixes.push(prefix);
    }

    /// The normalized reference of the pulled image `reference` names (by reference, repo
    /// digest or image id), if it is pulled.
    pub(super) fn resolve(&self, reference: &str) -> Option<&str> {
        if reference.starts_with("sha256:") {
            return self
                .pulled
                .iter()
                .find(|stored| image_id(stored) == reference)
                .map(String::as_str);
        }
        let wanted = normalize(reference)?;
        if let Some(stored) = self.pulled.get(&wanted) {
            return Some(stored);
        }
        self.pulled
            .iter()
            .find(|stored| repo_digest(stored) == wanted)
            .map(String::as_str)
    }
}

/// The image a request names, or `InvalidArgument` when it names none.
fn requested<'a>(
    operation: &'static str,
    spec: Option<&'a cri::ImageSpec>,
) -> Result<&'a str, RuntimeError> {
    match spec.map(|spec| spec.image.as_str()) {
        Some(image) if !image.is_empty() => Ok(image),
        _ => Err(invalid_argument(operation, "no image specified")),
    }
}

/// The size every fake image reports, in bytes. Not zero: a runtime never stores an empty
/// image, and upstream's kubelet refuses an image status without an id or a size.
const IMAGE_SIZE: u64 = 1 << 20;

/// The CRI description of the image stored under `normalized`.
fn describe(normalized: &str) -> cri::Image {
    cri::Image {
        id: image_id(normalized),
        size: IMAGE_SIZE,
        repo_tags: repo_tags(normalized),
        repo_digests: vec![repo_digest(normalized)],
        spec: Some(cri::ImageSpec {
            image: image_id(normalized),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl FakeRuntime {
    /// `PullImage`: records the image as pulled and answers its id.
    pub(super) fn pull_image(
        &mut self,
        request: &cri::PullImageRequest,
    ) -> Result<cri::PullImageResponse, RuntimeError> {
        let operation = cri::PullImageRequest::OPERATION;
        let image = requested(operation, request.image.as_ref())?;
        let normalized = normalize(image).ok_or_else(|| {
            invalid_argument(operation, format!("invalid image reference {image:?}"))
        })?;
        let store = &mut self.images;
        if store.missing_prefixes.iter().any(|prefix| {
            image.starts_with(prefix.as_str()) || normalized.starts_with(prefix.as_str())
        }) {
            return Err(not_found(
                operation,
                format!("failed to pull image {image:?}: {normalized}"),
            ));
        }
        let image_ref = image_id(&normalized);
        store.pulled.insert(normalized);
        Ok(cri::PullImageResponse { image_ref })
    }

    /// `ImageStatus`: the image when pulled, an empty answer (not an error) when not.
    pub(super) fn image_status(
        &self,
        request: &cri::ImageStatusRequest,
    ) -> Result<cri::ImageStatusResponse, RuntimeError> {
        let image = requested(cri::ImageStatusRequest::OPERATION, request.image.as_ref())?;
        Ok(cri::ImageStatusResponse {
            image: self.images.resolve(image).map(describe),
            ..Default::default()
        })
    }

    /// `ListImages`: every pulled image, or only the one the filter names.
    pub(super) fn list_images(&self, request: &cri::ListImagesRequest) -> cri::ListImagesResponse {
        let wanted = request
            .filter
            .as_ref()
            .and_then(|filter| filter.image.as_ref())
            .map(|spec| spec.image.as_str())
            .filter(|image| !image.is_empty());
        let images = match wanted {
            Some(image) => self
                .images
                .resolve(image)
                .map(describe)
                .into_iter()
                .collect(),
            None => self
                .images
                .pulled
                .iter()
                .map(|stored| describe(stored))
                .collect(),
        };
        cri::ListImagesResponse { images }
    }

    /// `RemoveImage`: forgets the image; removing an image that is not there succeeds.
    pub(super) fn remove_image(
        &mut self,
        request: &cri::RemoveImageRequest,
    ) -> Result<cri::RemoveImageResponse, RuntimeError> {
        let image = requested(cri::RemoveImageRequest::OPERATION, request.image.as_ref())?;
        if let Some(stored) = self.images.resolve(image).map(str::to_string) {
            self.images.pulled.remove(&stored);
        }
        Ok(cri::RemoveImageResponse {})
    }
}
