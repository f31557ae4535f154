//! A CRI client of the containerd under test, so tests can see what the runtime really holds
//! (no crictl needed on the machine).

use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::api::{
    Container, ContainerFilter, ContainerStatsFilter, ContainerStatus, ContainerStatusRequest,
    Image, ListContainerStatsRequest, ListContainersRequest, ListImagesRequest,
    ListPodSandboxRequest, PodSandbox, PodSandboxFilter, PullImageRequest, RemoveImageRequest,
    StatusRequest, StopContainerRequest,
};
use sergeant_runtime_adapters::cri::{image_named, CriClient, CriClientConfig};

/// A blocking CRI client.
pub struct Runtime {
    tokio: tokio::runtime::Runtime,
    client: CriClient,
}

impl Runtime {
    /// The runtime at `SERGEANT_CRI_ENDPOINT`.
    pub fn connect() -> Self {
        let raw = std::env::var("SERGEANT_CRI_ENDPOINT").expect(
            "SERGEANT_CRI_ENDPOINT is not set: run the tests through tests/run.sh, which starts containerd",
        );
        Self::connect_to(&raw)
    }

    /// The runtime at `endpoint`.
    pub fn connect_to(endpoint: &str) -> Self {
        let endpoint = Endpoint::parse(endpoint).expect("a valid CRI endpoint");
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let client = tokio
            .block_on(async { CriClient::new(&CriClientConfig::new(endpoint)) })
            .expect("a CRI client");
        Self { tokio, client }
    }

    /// Every container carrying all of `labels`, newest first.
    pub fn containers(&self, labels: &[(&str, &str)]) -> Vec<Container> {
        let filter = ContainerFilter {
            label_selector: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..ContainerFilter::default()
        };
        let mut found = self
            .tokio
            .block_on(self.client.call(ListContainersRequest {
                filter: Some(filter),
            }))
            .expect("containers listed")
            .containers;
        found.sort_by_key(|c| std::cmp::Reverse(c.created_at));
        found
    }

    /// Every sandbox carrying all of `labels`.
    pub fn sandboxes(&self, labels: &[(&str, &str)]) -> Vec<PodSandbox> {
        let filter = PodSandboxFilter {
            label_selector: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..PodSandboxFilter::default()
        };
        self.tokio
            .block_on(self.client.call(ListPodSandboxRequest {
                filter: Some(filter),
            }))
            .expect("sandboxes listed")
            .items
    }

    /// Removes image `image`, so the next container that uses it needs a real pull. CRI
    /// removes the image behind the name, with every other name it has. Removing a missing
    /// image succeeds.
    pub fn remove_image(&self, image: &str) {
        self.tokio
            .block_on(self.client.call(RemoveImageRequest {
                image: Some(image_named(image)),
            }))
            .unwrap_or_else(|e| panic!("removing image {image}: {e}"));
    }

    /// Pulls image `image` (from a registry that wants no credentials).
    pub fn pull_image(&self, image: &str) {
        self.tokio
            .block_on(self.client.call(PullImageRequest {
                image: Some(image_named(image)),
                ..PullImageRequest::default()
            }))
            .unwrap_or_else(|e| panic!("pulling image {image}: {e}"));
    }

    /// Every image the runtime holds.
    pub fn images(&self) -> Vec<Image> {
        self.tokio
            .block_on(self.client.call(ListImagesRequest { filter: None }))
            .expect("images listed")
            .images
    }

    /// Stops container `id` at once (no grace period), as something outside sergeant would.
    pub fn stop_container(&self, id: &str) {
        self.tokio
            .block_on(self.client.call(StopContainerRequest {
                container_id: id.to_owned(),
                timeout: 0,
            }))
            .unwrap_or_else(|e| panic!("stopping container {id}: {e}"));
    }

    /// The status of container `id`.
    pub fn container_status(&self, id: &str) -> ContainerStatus {
        self.tokio
            .block_on(self.client.call(ContainerStatusRequest {
                container_id: id.to_owned(),
                verbose: false,
            }))
            .expect("container status")
            .status
            .expect("a status")
    }

    /// What the runtime keeps about container `id` beyond its status: the `info` document of
    /// its verbose status (containerd's holds the CRI configuration it was created with,
    /// `config`, and the OCI spec it made of it, `runtimeSpec`).
    pub fn container_info(&self, id: &str) -> serde_json::Value {
        let response = self
            .tokio
            .block_on(self.client.call(ContainerStatusRequest {
                container_id: id.to_owned(),
                verbose: true,
            }))
            .expect("verbose container status");
        let info = response.info.get("info").expect("an info document");
        serde_json::from_str(info).expect("info is JSON")
    }

    /// The runtime's own `NetworkReady` condition.
    pub fn network_ready(&self) -> bool {
        self.tokio
            .block_on(self.client.call(StatusRequest { verbose: false }))
            .expect("runtime status")
            .status
            .is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.r#type == "NetworkReady" && c.status)
            })
    }

    /// Whether the runtime says it applies `supplementalGroupsPolicy: Strict` (its CRI
    /// features; a runtime that reports none does not).
    pub fn applies_strict_groups(&self) -> bool {
        self.tokio
            .block_on(self.client.call(StatusRequest { verbose: false }))
            .expect("runtime status")
            .features
            .is_some_and(|f| f.supplemental_groups_policy)
    }

    /// The memory container `id` uses as the runtime counts it (`usage_bytes`), in bytes;
    /// `None` when the runtime has no stats for it yet.
    pub fn memory_usage(&self, id: &str) -> Option<u64> {
        let filter = ContainerStatsFilter {
            id: id.to_owned(),
            ..Default::default()
        };
        self.tokio
            .block_on(self.client.call(ListContainerStatsRequest {
                filter: Some(filter),
            }))
            .expect("container stats")
            .stats
            .into_iter()
            .find_map(|stats| Some(stats.memory?.usage_bytes?.value))
    }
}
