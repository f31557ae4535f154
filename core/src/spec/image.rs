//! The image of a container as the runtime's image service is asked about it, in `ImageStatus`
//! and `PullImage`: upstream's kubelet sends the image as the container names it, with every
//! annotation of the pod (the runtime may act on them: a pull of a pod's image can be told
//! apart from another's, as the CRI's `ImageSpec.annotations` intends). And the image once the
//! runtime has it ([`NodeImage`]), as a container is created from it.

use k8s_cri::v1::ImageSpec;
use k8s_openapi::api::core::v1::Pod;

use super::security::ImageUser;

/// An image the runtime has, as a container is created from it. Upstream's kubelet creates
/// the container from the image's ID, not its name, so the container runs the very image the
/// kubelet checked (a tag moved by a later pull changes nothing), and names the image as the
/// container did in `user_specified_image`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImage {
    /// The runtime's ID of the image: the image status's `id`, or the reference its pull
    /// answered (`sha256:…` on containerd).
    pub id: String,
    /// The user the image runs as when the container names none.
    pub user: ImageUser,
}

/// The CRI spec of `image`, named by a container of `pod`: the name, and the pod's
/// annotations.
#[must_use]
pub fn image_spec(pod: &Pod, image: &str) -> ImageSpec {
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    ImageSpec {
        image: image.to_owned(),
        annotations: annotations.into_iter().collect(),
        ..ImageSpec::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_image_goes_with_the_pods_annotations() {
        let annotated = |pairs: &[(&str, &str)]| {
            let mut pod = Pod::default();
            pod.metadata.annotations = (!pairs.is_empty()).then(|| {
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect()
            });
            pod
        };
        let seen = (
            "kubernetes.io/config.seen",
            "2027-01-01T00:00:00.000000000Z",
        );
        let source = ("kubernetes.io/config.source", "file");
        for pairs in [&[][..], &[source], &[seen, source, ("note", "hi")]] {
            let spec = image_spec(&annotated(pairs), "busybox:1.36");
            let want: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            assert_eq!(spec.annotations, want);
            assert_eq!(spec.image, "busybox:1.36");
            assert_eq!(
                spec.user_specified_image, "",
                "upstream sends none with a pull"
            );
            assert_eq!(spec.runtime_handler, "");
        }
    }
}
