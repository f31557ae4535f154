//! Pulling from the local registry, image status, and the error of a missing image.

mod common;

use sergeant_runtime_adapters::cri::api::{
    ImageStatusRequest, ListImagesRequest, PullImageRequest, RemoveImageRequest,
};
use sergeant_runtime_adapters::cri::{image_named, CriError};

use common::{MISSING_IMAGE, SHELL_IMAGE};

#[tokio::test]
async fn pull_from_the_local_registry_then_image_status_shows_it() {
    let client = common::client();
    let image_ref = client
        .call(PullImageRequest {
            image: Some(image_named(SHELL_IMAGE)),
            ..PullImageRequest::default()
        })
        .await
        .expect("pull")
        .image_ref;
    assert!(image_ref.starts_with("sha256:"), "{image_ref}");

    let status = client
        .call(ImageStatusRequest {
            image: Some(image_named(SHELL_IMAGE)),
            verbose: false,
        })
        .await
        .expect("image status");
    let image = status.image.expect("the pulled image is present");
    assert_eq!(image.id, image_ref);
    assert!(
        image.repo_tags.iter().any(|t| t == SHELL_IMAGE),
        "{image:?}"
    );
    assert!(image.size > 0);

    let images = client
        .call(ListImagesRequest { filter: None })
        .await
        .expect("list images")
        .images;
    assert!(
        images.iter().any(|i| i.id == image_ref),
        "pulled image not listed"
    );
}

#[tokio::test]
async fn pulling_a_missing_image_is_not_found_naming_the_image() {
    let client = common::client();
    let err = client
        .call(PullImageRequest {
            image: Some(image_named(MISSING_IMAGE)),
            ..PullImageRequest::default()
        })
        .await
        .expect_err("the registry has no such image");
    assert!(
        matches!(
            err,
            CriError::NotFound {
                operation: "pull_image",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(MISSING_IMAGE), "{err}");
}

#[tokio::test]
async fn status_of_an_absent_image_is_empty_and_removing_it_succeeds() {
    let client = common::client();
    let status = client
        .call(ImageStatusRequest {
            image: Some(image_named(MISSING_IMAGE)),
            verbose: false,
        })
        .await
        .expect("image status");
    assert!(status.image.is_none(), "{status:?}");
    client
        .call(RemoveImageRequest {
            image: Some(image_named(MISSING_IMAGE)),
        })
        .await
        .expect("removing an absent image is a no-op");
}
