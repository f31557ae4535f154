//! What the runtime says about the node's ready sandboxes, running containers, their usage
//! samples and the image filesystems, read at once for one stats sample.

use sergeant_core::stats::listing::{node_selector, ready_sandboxes, running_containers};
use sergeant_messages::runtime::{cri, RuntimeOperation};

use super::error::SampleError;
use crate::runtime::RuntimePort;

/// What the runtime says about the node's sandboxes and containers, read at once.
#[derive(Debug, Default)]
pub struct RuntimeView {
    /// The ready sandboxes.
    pub sandboxes: Vec<cri::PodSandbox>,
    /// The running containers.
    pub containers: Vec<cri::Container>,
    /// The usage samples of containers.
    pub stats: Vec<cri::ContainerStats>,
    /// The image filesystems.
    pub image_fs: Vec<cri::FilesystemUsage>,
}

/// Calls `port` with `request`, naming the operation in the error.
async fn call<R: RuntimeOperation>(
    port: &RuntimePort,
    request: R,
) -> Result<R::Response, SampleError> {
    port.call(request)
        .await
        .map_err(|source| SampleError::Runtime {
            operation: R::OPERATION,
            source,
        })
}

impl RuntimeView {
    /// Lists node `node`'s sandboxes, containers and their stats, and the image filesystems,
    /// concurrently.
    ///
    /// # Errors
    /// [`SampleError::Runtime`] naming the first call that failed.
    pub async fn list(port: &RuntimePort, node: &str) -> Result<Self, SampleError> {
        let sandboxes = call(port, ready_sandboxes(node));
        let containers = call(port, running_containers(node));
        let stats = call(
            port,
            cri::ListContainerStatsRequest {
                filter: Some(cri::ContainerStatsFilter {
                    label_selector: node_selector(node),
                    ..Default::default()
                }),
            },
        );
        let image_fs = call(port, cri::ImageFsInfoRequest {});
        let (sandboxes, containers, stats, image_fs) =
            futures::try_join!(sandboxes, containers, stats, image_fs)?;
        Ok(Self {
            sandboxes: sandboxes.items,
            containers: containers.containers,
            stats: stats.stats,
            image_fs: image_fs.image_filesystems,
        })
    }
}
