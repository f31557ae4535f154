//! Which pods and containers the summary reports, from the runtime's lists joined with the pod
//! manager's pods: every pod of this node with a ready sandbox (its newest, when it has had
//! several), with its running containers and their CRI usage samples, and what the runtime's
//! sandbox stats say of the pod itself (Windows).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use sergeant_messages::pods::core::Pod;
use sergeant_messages::runtime::cri;

use sergeant_actors::stats::RuntimeView;
use sergeant_core::stats::summary::PodReference;
use sergeant_core::stats::windows::pods::PodUsage;
use sergeant_host::stats::time_of_ns;

/// One pod to report, before its host-side numbers are read.
#[derive(Debug)]
pub struct PodPlan {
    /// Which pod.
    pub pod_ref: PodReference,
    /// Its start time.
    pub start_time: Time,
    /// Its current sandbox.
    pub sandbox_id: String,
    /// Its running containers.
    pub containers: Vec<ContainerPlan>,
    /// What the runtime's sandbox stats say of the pod, when it listed them (Windows).
    pub usage: Option<PodUsage>,
}

/// One running container to report.
#[derive(Debug)]
pub struct ContainerPlan {
    /// Its runtime id.
    pub id: String,
    /// Its name in the pod.
    pub name: String,
    /// When it was created, in nanoseconds since the Unix epoch.
    pub created_at: i64,
    /// Its usage sample, when the runtime gave one.
    pub stats: Option<cri::ContainerStats>,
}

/// The pods of `pods` that have a ready sandbox in `view`, with their running containers, and
/// the sandbox's `usage` (by sandbox id) when the runtime gave it: its containers' samples
/// count as listed ones.
#[must_use]
pub fn plan(
    pods: &[Arc<Pod>],
    view: &RuntimeView,
    usage: &HashMap<String, PodUsage>,
) -> Vec<PodPlan> {
    let mut newest: HashMap<&str, &cri::PodSandbox> = HashMap::new();
    for sandbox in &view.sandboxes {
        let Some(uid) = sandbox.metadata.as_ref().map(|m| m.uid.as_str()) else {
            continue;
        };
        let slot = newest.entry(uid).or_insert(sandbox);
        if sandbox.created_at > slot.created_at {
            *slot = sandbox;
        }
    }
    let stats: HashMap<&str, &cri::ContainerStats> = view
        .stats
        .iter()
        .chain(usage.values().flat_map(|pod| &pod.containers))
        .filter_map(|s| Some((s.attributes.as_ref()?.id.as_str(), s)))
        .collect();
    let mut containers: HashMap<&str, Vec<ContainerPlan>> = HashMap::new();
    for container in &view.containers {
        containers
            .entry(container.pod_sandbox_id.as_str())
            .or_default()
            .push(ContainerPlan {
                id: container.id.clone(),
                name: container
                    .metadata
                    .as_ref()
                    .map(|m| m.name.clone())
                    .unwrap_or_default(),
                created_at: container.created_at,
                stats: stats.get(container.id.as_str()).map(|s| (*s).clone()),
            });
    }
    pods.iter()
        .filter_map(|pod| {
            let uid = pod.metadata.uid.as_deref()?;
            let sandbox = newest.get(uid)?;
            let mut running = containers.remove(sandbox.id.as_str()).unwrap_or_default();
            running.sort_by(|a, b| a.name.cmp(&b.name));
            let start_time = pod
                .status
                .as_ref()
                .and_then(|status| status.start_time.clone())
                .unwrap_or_else(|| time_of_ns(sandbox.created_at));
            Some(PodPlan {
                pod_ref: PodReference {
                    name: pod.metadata.name.clone().unwrap_or_default(),
                    namespace: pod.metadata.namespace.clone().unwrap_or_default(),
                    uid: uid.to_string(),
                },
                start_time,
                usage: usage.get(sandbox.id.as_str()).cloned(),
                sandbox_id: sandbox.id.clone(),
                containers: running,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use sergeant_messages::pods::core::{Pod, PodStatus};

    use super::*;
    use sergeant_core::testing::listed_container as container;

    fn pod(name: &str, uid: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("ns".to_string()),
                uid: Some(uid.to_string()),
                ..Default::default()
            },
            status: Some(PodStatus::default()),
            ..Default::default()
        })
    }

    fn sandbox(id: &str, uid: &str, created_at: i64) -> cri::PodSandbox {
        cri::PodSandbox {
            id: id.to_string(),
            metadata: Some(cri::PodSandboxMetadata {
                uid: uid.to_string(),
                ..Default::default()
            }),
            created_at,
            ..Default::default()
        }
    }

    #[test]
    fn pods_join_their_newest_sandbox_and_its_containers() {
        let view = RuntimeView {
            sandboxes: vec![
                sandbox("old", "u1", 1),
                sandbox("new", "u1", 2),
                sandbox("stranger", "u9", 1),
            ],
            containers: vec![
                container("c-old", "old", "app"),
                container("c-b", "new", "b"),
                container("c-a", "new", "a"),
                container("c-x", "stranger", "x"),
            ],
            stats: vec![cri::ContainerStats {
                attributes: Some(cri::ContainerAttributes {
                    id: "c-a".to_string(),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            image_fs: Vec::new(),
            sandbox_stats: Vec::new(),
        };
        let plans = plan(
            &[pod("web", "u1"), pod("pending", "u2")],
            &view,
            &HashMap::new(),
        );
        assert_eq!(plans.len(), 1);
        let web = &plans[0];
        assert_eq!(web.pod_ref.name, "web");
        assert_eq!(web.pod_ref.namespace, "ns");
        assert_eq!(web.sandbox_id, "new");
        let names: Vec<&str> = web.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(web.containers[0].stats.is_some());
        assert!(web.containers[1].stats.is_none());
        assert_eq!(web.start_time, time_of_ns(2));
    }
}
