//! What the runtime says about the node's ready sandboxes, running containers, their usage
//! samples and the image filesystems, read at once for one stats sample; on a Windows node also
//! the pod sandboxes' stats, where pods' numbers come from the runtime alone.

use sergeant_core::spec::NodeOs;
use sergeant_core::stats::listing::{node_selector, ready_sandboxes, running_containers};
use sergeant_messages::runtime::{cri, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;

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
    /// The pod sandboxes' stats: listed on Windows only (`ListPodSandboxStats`), and empty
    /// when the runtime does not implement the call.
    pub sandbox_stats: Vec<cri::PodSandboxStats>,
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
    /// concurrently; and the sandboxes' stats when the node runs `os` Windows.
    ///
    /// # Errors
    /// [`SampleError::Runtime`] naming the first call that failed.
    pub async fn list(port: &RuntimePort, node: &str, os: NodeOs) -> Result<Self, SampleError> {
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
        let sandbox_stats = sandbox_stats(port, node, os);
        let (sandboxes, containers, stats, image_fs, sandbox_stats) =
            futures::try_join!(sandboxes, containers, stats, image_fs, sandbox_stats)?;
        Ok(Self {
            sandboxes: sandboxes.items,
            containers: containers.containers,
            stats: stats.stats,
            image_fs: image_fs.image_filesystems,
            sandbox_stats,
        })
    }
}

/// Node `node`'s sandboxes' stats on Windows; none elsewhere, or from a runtime without the
/// call (as upstream, which then reads the containers' stats alone).
async fn sandbox_stats(
    port: &RuntimePort,
    node: &str,
    os: NodeOs,
) -> Result<Vec<cri::PodSandboxStats>, SampleError> {
    if os != NodeOs::Windows {
        return Ok(Vec::new());
    }
    let request = cri::ListPodSandboxStatsRequest {
        filter: Some(cri::PodSandboxStatsFilter {
            label_selector: node_selector(node),
            ..Default::default()
        }),
    };
    match call(port, request).await {
        Ok(list) => Ok(list.stats),
        Err(SampleError::Runtime {
            source: RuntimeError::Unimplemented { .. },
            ..
        }) => Ok(Vec::new()),
        Err(err) => Err(err),
    }
}
