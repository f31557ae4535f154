//! A pod's volumes as decided from its spec: which host path backs each volume
//! ([`VolumePlan`]), what the API-backed ones hold ([`api_payloads`]), the subPath rules and
//! mount points ([`SubPathMount`]), and how far the file work on them reaches ([`Reach`]).
//! Making them real on the node is `sergeant_host::volumes`.

mod error;
mod host_path;
mod payload;
mod reach;
mod subpath;

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::{Pod, Volume};
use sergeant_config::Quantity;

use crate::context::{
    is_safe_path_component, EnvSources, NodeContext, PodIdentity, PodObjects, SpecError,
};
pub use error::VolumeError;
pub use host_path::HostPathType;
pub use payload::{FileContent, Payload};
pub use reach::Reach;
pub use subpath::{
    sub_paths_reach, SubPathError, SubPathMount, SubPathReason, VOLUME_SUBPATHS_DIR,
};

/// The directory below the pod directory that holds its volumes, one directory per plugin
/// (upstream's layout, so node tools find them).
pub const VOLUMES_DIR: &str = "volumes";

/// The plugin directory of a pod's emptyDir volumes, below [`VOLUMES_DIR`].
const EMPTY_DIR_PLUGIN: &str = "kubernetes.io~empty-dir";

/// Whether the volumes in plugin directory `plugin` (below [`VOLUMES_DIR`]) count as the pod's
/// local ephemeral storage when they live on the node's disk: emptyDir, configMap and
/// downwardAPI, as upstream counts them (secrets and projected volumes live in memory).
#[must_use]
pub fn counts_as_ephemeral_storage(plugin: &str) -> bool {
    plugin == EMPTY_DIR_PLUGIN
        || plugin == ApiVolume::ConfigMap.names().1
        || plugin == ApiVolume::DownwardApi.names().1
}

/// Where each of a pod's volumes lives on the node. Computed without I/O from the spec, used
/// to set the volumes up and to turn container `volumeMounts` into runtime mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumePlan {
    /// Who the pod is, for paths and errors.
    pub id: PodIdentity,
    /// The pod's directory on the node, where its subPath mount points go.
    pub pod_dir: PathBuf,
    /// The group the pod's emptyDir and API-backed volumes are handed to, if any.
    pub ownership: Option<VolumeOwnership>,
    volumes: BTreeMap<String, PlannedVolume>,
}

/// The group a pod's volumes are handed to (`spec.securityContext.fsGroup`), so that its
/// processes, which all have that group, can use them whatever user they run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VolumeOwnership {
    /// The group id.
    pub group: u32,
    /// `fsGroupChangePolicy: OnRootMismatch`: a volume whose root already has the group and
    /// the modes is left as it is; otherwise (`Always`) every file is checked.
    pub on_root_mismatch: bool,
}

impl VolumeOwnership {
    /// The ownership `pod` asks for, on a node where volumes have unix groups.
    ///
    /// # Errors
    ///
    /// A field error naming `spec.securityContext.fsGroup` when it is not a group id.
    fn of(pod: &Pod, id: &PodIdentity, node: &NodeContext) -> Result<Option<Self>, SpecError> {
        let sc = pod.spec.as_ref().and_then(|s| s.security_context.as_ref());
        let Some(fs_group) = sc.and_then(|sc| sc.fs_group) else {
            return Ok(None);
        };
        if !node.has_cgroups() {
            return Ok(None); // Windows: files carry ACLs, not unix groups (as upstream)
        }
        let group = u32::try_from(fs_group).map_err(|_| {
            SpecError::field(
                &id.display,
                "spec.securityContext.fsGroup",
                format!("{fs_group} is not a group id"),
            )
        })?;
        let on_root_mismatch =
            sc.and_then(|sc| sc.fs_group_change_policy.as_deref()) == Some("OnRootMismatch");
        Ok(Some(Self {
            group,
            on_root_mismatch,
        }))
    }
}

/// One volume of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedVolume {
    /// The host path mounted into containers.
    pub host_path: PathBuf,
    /// Whether the volume lives in memory (a tmpfs).
    pub is_memory: bool,
    /// Whether every mount of it is read-only whatever the container asks.
    pub read_only: bool,
    /// What kind of volume it is, for setting it up.
    pub source: PlannedSource,
}

/// The kinds of volume the node provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedSource {
    /// A fresh directory for the pod's lifetime (`emptyDir`), on disk or in memory.
    EmptyDir {
        /// The tmpfs size for a memory emptyDir (`sizeLimit`); `None` leaves the kernel default.
        size_limit_bytes: Option<i64>,
    },
    /// A path of the node (`hostPath`), checked or created as its type says.
    HostPath(HostPathType),
    /// Files written by the node from API objects or the pod itself, kept current.
    Api(ApiVolume),
}

/// The volume types whose files the node writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVolume {
    /// Keys of a config map.
    ConfigMap,
    /// Keys of a secret, in memory.
    Secret,
    /// Fields of the pod.
    DownwardApi,
    /// Several of those and service account tokens in one directory, in memory.
    Projected,
}

impl ApiVolume {
    /// The spec's name of the type, and upstream's plugin directory for it.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            ApiVolume::ConfigMap => ("configMap", "kubernetes.io~configmap"),
            ApiVolume::Secret => ("secret", "kubernetes.io~secret"),
            ApiVolume::DownwardApi => ("downwardAPI", "kubernetes.io~downward-api"),
            ApiVolume::Projected => ("projected", "kubernetes.io~projected"),
        }
    }

    fn of(volume: &Volume) -> Option<Self> {
        if volume.config_map.is_some() {
            Some(ApiVolume::ConfigMap)
        } else if volume.secret.is_some() {
            Some(ApiVolume::Secret)
        } else if volume.downward_api.is_some() {
            Some(ApiVolume::DownwardApi)
        } else if volume.projected.is_some() {
            Some(ApiVolume::Projected)
        } else {
            None
        }
    }
}

impl PlannedSource {
    /// The spec's name of the volume type, for errors and metrics.
    pub fn type_name(self) -> &'static str {
        match self {
            PlannedSource::EmptyDir { .. } => "emptyDir",
            PlannedSource::HostPath(_) => "hostPath",
            PlannedSource::Api(kind) => kind.names().0,
        }
    }
}

impl VolumePlan {
    /// Plans every volume of `pod`: emptyDir, configMap, secret, downwardAPI and projected
    /// under `<root_dir>/pods/<uid>/volumes/<plugin>/<name>` (the last four read-only, secrets
    /// and projections in memory), hostPath at its own path.
    ///
    /// # Errors
    ///
    /// [`SpecError::Field`] naming `spec.volumes[i]` for an unusable pod identity or volume
    /// name, a duplicate name, a relative hostPath, an unknown hostPath type or emptyDir
    /// medium, a bad `sizeLimit`, or a volume type sergeant does not support.
    pub fn for_pod(pod: &Pod, node: &NodeContext) -> Result<VolumePlan, SpecError> {
        let id = PodIdentity::of(pod)?;
        let pod_dir = node.pod_dir(&id.uid);
        let mut volumes = BTreeMap::new();
        let specs = pod
            .spec
            .as_ref()
            .and_then(|s| s.volumes.as_deref())
            .unwrap_or_default();
        for (index, volume) in specs.iter().enumerate() {
            let field = format!("spec.volumes[{index}]");
            let fail = |at: &str, reason: String| {
                SpecError::field(&id.display, format!("{field}{at}"), reason)
            };
            if !is_safe_path_component(&volume.name) {
                return Err(fail(
                    ".name",
                    format!("{:?} is not a usable volume name", volume.name),
                ));
            }
            let planned = plan_one(volume, &pod_dir).map_err(|(at, reason)| fail(at, reason))?;
            if volumes.insert(volume.name.clone(), planned).is_some() {
                return Err(fail(
                    ".name",
                    format!("{:?} is used by another volume", volume.name),
                ));
            }
        }
        Ok(VolumePlan {
            ownership: VolumeOwnership::of(pod, &id, node)?,
            id,
            pod_dir,
            volumes,
        })
    }

    /// The planned volume called `name`, if the pod has one.
    pub fn get(&self, name: &str) -> Option<&PlannedVolume> {
        self.volumes.get(name)
    }

    /// Every planned volume by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PlannedVolume)> {
        self.volumes
            .iter()
            .map(|(name, volume)| (name.as_str(), volume))
    }

    /// How far setting the volumes up reaches: to host paths when a `hostPath` volume is
    /// among them, else only into places sergeant owns.
    #[must_use]
    pub fn reach(&self) -> Reach {
        if self
            .volumes
            .values()
            .any(|v| matches!(v.source, PlannedSource::HostPath(_)))
        {
            Reach::Host
        } else {
            Reach::Own
        }
    }
}

/// Plans one volume; the error is (field suffix, reason).
fn plan_one(
    volume: &Volume,
    pod_dir: &std::path::Path,
) -> Result<PlannedVolume, (&'static str, String)> {
    if let Some(empty_dir) = &volume.empty_dir {
        let is_memory = match empty_dir.medium.as_deref().unwrap_or("") {
            "" => false,
            "Memory" => true,
            other => {
                return Err((
                    ".emptyDir.medium",
                    format!("{other:?} is not supported (use \"\" or Memory)"),
                ))
            }
        };
        let size_limit_bytes = match &empty_dir.size_limit {
            Some(limit) => {
                let parsed: Quantity = limit
                    .0
                    .parse()
                    .map_err(|e| (".emptyDir.sizeLimit", format!("{e}")))?;
                Some(parsed.value()).filter(|bytes| *bytes > 0)
            }
            None => None,
        };
        return Ok(PlannedVolume {
            host_path: pod_dir
                .join(VOLUMES_DIR)
                .join(EMPTY_DIR_PLUGIN)
                .join(&volume.name),
            is_memory,
            read_only: false,
            source: PlannedSource::EmptyDir { size_limit_bytes },
        });
    }
    if let Some(host) = &volume.host_path {
        let kind = HostPathType::parse(host.type_.as_deref().unwrap_or("")).ok_or_else(|| {
            (
                ".hostPath.type",
                format!(
                    "{:?} is not a hostPath type",
                    host.type_.as_deref().unwrap_or("")
                ),
            )
        })?;
        let path = PathBuf::from(&host.path);
        if !path.is_absolute() {
            return Err((
                ".hostPath.path",
                format!("{:?} is not an absolute path", host.path),
            ));
        }
        return Ok(PlannedVolume {
            host_path: path,
            is_memory: false,
            read_only: false,
            source: PlannedSource::HostPath(kind),
        });
    }
    if let Some(kind) = ApiVolume::of(volume) {
        let is_memory = matches!(kind, ApiVolume::Secret | ApiVolume::Projected);
        return Ok(PlannedVolume {
            host_path: pod_dir
                .join(VOLUMES_DIR)
                .join(kind.names().1)
                .join(&volume.name),
            is_memory,
            read_only: true,
            source: PlannedSource::Api(kind),
        });
    }
    Err((
        "",
        format!("volume type {} is not supported", volume_type(volume)),
    ))
}

/// The files of every API-backed volume of `pod` by volume name, from the objects the sync
/// step fetched; and a [`VolumeError`] for each such volume whose files cannot be computed (a
/// missing config map, secret or key, a standalone node). Pure.
#[must_use]
pub fn api_payloads(
    plan: &VolumePlan,
    pod: &Pod,
    node: &NodeContext,
    objects: &PodObjects,
) -> (BTreeMap<String, Payload>, Vec<VolumeError>) {
    let sources = EnvSources {
        pod,
        id: &plan.id,
        node,
        pod_ip: None,
        objects,
    };
    let mut payloads = BTreeMap::new();
    let mut failures = Vec::new();
    let specs = pod.spec.iter().flat_map(|s| s.volumes.iter().flatten());
    for volume in specs {
        let Some(PlannedSource::Api(kind)) = plan.get(&volume.name).map(|v| v.source) else {
            continue;
        };
        match payload::volume_payload(volume, &sources) {
            Ok(files) => {
                payloads.insert(volume.name.clone(), files);
            }
            Err(error) => failures.push(VolumeError {
                pod: plan.id.display.clone(),
                volume: volume.name.clone(),
                kind: kind.names().0,
                reason: error.to_string(),
            }),
        }
    }
    (payloads, failures)
}

/// The name of the volume's source field (`configMap`, `secret`, …), from its JSON form.
fn volume_type(volume: &Volume) -> String {
    serde_json::to_value(volume)
        .ok()
        .and_then(|value| {
            value
                .as_object()?
                .keys()
                .find(|key| *key != "name")
                .cloned()
        })
        .unwrap_or_else(|| "(none given)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{empty_dir, host_path, node, pod_with};

    fn plan(volumes: Vec<Volume>) -> Result<VolumePlan, SpecError> {
        let mut pod = pod_with(vec![], vec![]);
        pod.spec.as_mut().unwrap().volumes = Some(volumes);
        VolumePlan::for_pod(&pod, &node(PathBuf::from("/var/lib/sgt")))
    }

    #[test]
    fn empty_dirs_and_host_paths_are_placed() {
        let plan = plan(vec![
            empty_dir("data", None, None),
            empty_dir("cache", Some("Memory"), Some("16Mi")),
            host_path("logs", "/var/log", Some("Directory")),
        ])
        .unwrap();
        let data = plan.get("data").unwrap();
        assert_eq!(
            data.host_path,
            PathBuf::from("/var/lib/sgt/pods/uid-1/volumes/kubernetes.io~empty-dir/data")
        );
        assert!(!data.is_memory);
        let cache = plan.get("cache").unwrap();
        assert!(cache.is_memory);
        assert_eq!(
            cache.source,
            PlannedSource::EmptyDir {
                size_limit_bytes: Some(16 << 20)
            }
        );
        let logs = plan.get("logs").unwrap();
        assert_eq!(logs.host_path, PathBuf::from("/var/log"));
        assert_eq!(
            logs.source,
            PlannedSource::HostPath(HostPathType::Directory)
        );
        assert_eq!(plan.iter().count(), 3);
        assert!(plan.get("nope").is_none());
    }

    #[test]
    fn api_volumes_are_placed_read_only_secrets_in_memory() {
        let volumes: Vec<Volume> = serde_json::from_value(serde_json::json!([
            {"name": "cfg", "configMap": {"name": "cm"}},
            {"name": "sec", "secret": {"secretName": "s"}},
            {"name": "down", "downwardAPI": {}},
            {"name": "all", "projected": {"sources": []}}
        ]))
        .unwrap();
        let plan = plan(volumes).unwrap();
        let base = "/var/lib/sgt/pods/uid-1/volumes";
        let placed: Vec<(&str, String, bool, bool, &str)> = plan
            .iter()
            .map(|(name, v)| {
                let dir = v
                    .host_path
                    .strip_prefix(base)
                    .unwrap()
                    .display()
                    .to_string();
                (name, dir, v.is_memory, v.read_only, v.source.type_name())
            })
            .collect();
        assert_eq!(
            placed,
            [
                (
                    "all",
                    "kubernetes.io~projected/all".into(),
                    true,
                    true,
                    "projected"
                ),
                (
                    "cfg",
                    "kubernetes.io~configmap/cfg".into(),
                    false,
                    true,
                    "configMap"
                ),
                (
                    "down",
                    "kubernetes.io~downward-api/down".into(),
                    false,
                    true,
                    "downwardAPI"
                ),
                (
                    "sec",
                    "kubernetes.io~secret/sec".into(),
                    true,
                    true,
                    "secret"
                ),
            ]
        );
    }

    #[test]
    fn a_standalone_node_names_the_volume_it_cannot_fill() {
        let volumes: Vec<Volume> = serde_json::from_value(serde_json::json!([
            {"name": "cfg", "configMap": {"name": "cm"}},
            {"name": "down", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"name": "e", "emptyDir": {}}
        ]))
        .unwrap();
        let mut pod = pod_with(vec![], vec![]);
        pod.spec.as_mut().unwrap().volumes = Some(volumes);
        let node = node(PathBuf::from("/r"));
        let plan = VolumePlan::for_pod(&pod, &node).unwrap();
        let (payloads, failures) = api_payloads(&plan, &pod, &node, &PodObjects::default());
        assert_eq!(payloads.keys().collect::<Vec<_>>(), ["down"]);
        assert_eq!(payloads["down"]["n"].data, b"web");
        assert_eq!(
            failures.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["pod ns/web: volume \"cfg\" (configMap): needs the API server, which a standalone node does not have"]
        );
    }

    #[test]
    fn what_the_node_cannot_provide_is_refused_precisely() {
        let nfs: Volume = serde_json::from_value(
            serde_json::json!({"name": "n", "nfs": {"server": "s", "path": "/"}}),
        )
        .unwrap();
        let error = plan(vec![empty_dir("a", None, None), nfs])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "pod ns/web: spec.volumes[1]: volume type nfs is not supported"
        );
        let error = plan(vec![host_path("h", "relative", None)])
            .unwrap_err()
            .to_string();
        assert!(error.contains("spec.volumes[0].hostPath.path"), "{error}");
        let error = plan(vec![host_path("h", "/x", Some("Pipe"))])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("spec.volumes[0].hostPath.type: \"Pipe\""),
            "{error}"
        );
        let error = plan(vec![empty_dir("e", Some("HugePages"), None)])
            .unwrap_err()
            .to_string();
        assert!(error.contains("emptyDir.medium"), "{error}");
        let error = plan(vec![empty_dir("e", None, Some("big"))])
            .unwrap_err()
            .to_string();
        assert!(error.contains("emptyDir.sizeLimit"), "{error}");
        let error = plan(vec![empty_dir("e", None, None), empty_dir("e", None, None)])
            .unwrap_err()
            .to_string();
        assert!(error.contains("spec.volumes[1].name"), "{error}");
        let error = plan(vec![empty_dir("../e", None, None)])
            .unwrap_err()
            .to_string();
        assert!(error.contains("spec.volumes[0].name"), "{error}");
    }
}
