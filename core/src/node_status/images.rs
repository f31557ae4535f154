//! `status.images`: the images on the node as upstream reports them — largest first, at most
//! 50, each with at most 5 names (digests, then tags). The scheduler's image locality reads
//! them. Pure.

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::ContainerImage;

/// Most images in the node status (upstream `MaxImagesInNodeStatus`).
pub const MAX_IMAGES: usize = 50;
/// Most names per image (upstream `MaxNamesPerImageInNodeStatus`).
pub const MAX_NAMES: usize = 5;

/// The node-status image list of the runtime's images.
#[must_use]
pub fn node_images(mut images: Vec<cri::Image>) -> Vec<ContainerImage> {
    images.sort_by_key(|image| std::cmp::Reverse(image.size));
    images
        .into_iter()
        .filter(|image| !image.repo_digests.is_empty() || !image.repo_tags.is_empty())
        .take(MAX_IMAGES)
        .map(|image| {
            let names: Vec<String> = image
                .repo_digests
                .into_iter()
                .chain(image.repo_tags)
                .take(MAX_NAMES)
                .collect();
            ContainerImage {
                names: Some(names),
                size_bytes: Some(i64::try_from(image.size).unwrap_or(i64::MAX)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(tag: &str, size: u64) -> cri::Image {
        cri::Image {
            id: format!("sha256:{tag}"),
            repo_tags: vec![format!("example/{tag}:1")],
            repo_digests: vec![format!("example/{tag}@sha256:0")],
            size,
            ..cri::Image::default()
        }
    }

    #[test]
    fn images_are_listed_largest_first_and_capped() {
        let images: Vec<cri::Image> = (0..60).map(|n| image(&format!("i{n}"), n)).collect();
        let listed = node_images(images);
        assert_eq!(listed.len(), MAX_IMAGES);
        assert_eq!(listed[0].size_bytes, Some(59));
        assert_eq!(listed[49].size_bytes, Some(10));
        assert_eq!(
            listed[0].names.as_deref(),
            Some(
                &[
                    "example/i59@sha256:0".to_owned(),
                    "example/i59:1".to_owned()
                ][..]
            )
        );
    }

    #[test]
    fn names_are_capped_and_nameless_images_left_out() {
        let mut many = image("many", 1);
        many.repo_tags = (0..7).map(|n| format!("example/many:{n}")).collect();
        let nameless = cri::Image {
            id: "sha256:none".to_owned(),
            size: 9,
            ..cri::Image::default()
        };
        let listed = node_images(vec![many, nameless]);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].names.as_ref().map(Vec::len), Some(MAX_NAMES));
    }
}
