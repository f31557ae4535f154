//! The image of a container as the runtime's image service is asked about it, in `ImageStatus`
//! and `PullImage`: upstream's kubelet sends the image as the container names it (`:latest`
//! added when it names no tag or digest), with every
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

/// The CRI spec of `image`, named by a container of `pod`: the name ([`with_default_tag`]),
/// and the pod's annotations.
#[must_use]
pub fn image_spec(pod: &Pod, image: &str) -> ImageSpec {
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    ImageSpec {
        image: with_default_tag(image),
        annotations: annotations.into_iter().collect(),
        ..ImageSpec::default()
    }
}

/// The tag an image named without tag or digest means.
const DEFAULT_TAG: &str = "latest";

/// `image` with `:latest` when it names neither a tag nor a digest, as upstream's kubelet asks
/// the runtime about it: `busybox` is `busybox:latest`, `localhost:5000/web` is
/// `localhost:5000/web:latest` (the registry's port is no tag), and no host is added, so the
/// name stays the runtime's to resolve.
#[must_use]
pub fn with_default_tag(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') || last.contains(':') {
        image.to_owned()
    } else {
        format!("{image}:{DEFAULT_TAG}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn an_image_without_tag_or_digest_means_latest() {
        for (named, asked) in [
            ("busybox", "busybox:latest"),
            ("busybox:1.36", "busybox:1.36"),
            ("localhost:5000/web", "localhost:5000/web:latest"),
            ("localhost:5000/team/web:v2", "localhost:5000/team/web:v2"),
            (
                "registry.example/web@sha256:0123456789abcdef",
                "registry.example/web@sha256:0123456789abcdef",
            ),
        ] {
            assert_eq!(with_default_tag(named), asked, "{named}");
            assert_eq!(image_spec(&Pod::default(), named).image, asked);
        }
    }

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
