//! A pod's volumes on the node: which host path backs each volume ([`VolumePlan`]), and
//! making those paths real before the sandbox starts and removing them after the pod is gone
//! ([`setup_volumes`], [`teardown_pod_dir`]).

mod host_path;
mod setup;

use std::collections::BTreeMap;
use std::path::PathBuf;

use sergeant_config::Quantity;
use sergeant_messages::pods::core::{Pod, Volume};

pub use host_path::HostPathType;
pub use setup::{setup_volumes, teardown_pod_dir};

use crate::pod::spec::{NodeContext, PodIdentity, SpecError};

/// The directory of a pod's emptyDir volumes, below the pod directory (upstream's layout, so
/// node tools find them).
const EMPTY_DIR_PLUGIN: &str = "volumes/kubernetes.io~empty-dir";

/// Where each of a pod's volumes lives on the node. Computed without I/O from the spec, used
/// to set the volumes up and to turn container `volumeMounts` into runtime mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumePlan {
    /// `namespace/name` of the pod, for errors.
    pub(crate) pod: String,
    volumes: BTreeMap<String, PlannedVolume>,
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

/// The kinds of volume the node can provide on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedSource {
    /// A fresh directory for the pod's lifetime (`emptyDir`), on disk or in memory.
    EmptyDir {
        /// The tmpfs size for a memory emptyDir (`sizeLimit`); `None` leaves the kernel default.
        size_limit_bytes: Option<i64>,
    },
    /// A path of the node (`hostPath`), checked or created as its type says.
    HostPath(HostPathType),
}

impl VolumePlan {
    /// Plans every volume of `pod`: emptyDir under `<root_dir>/pods/<uid>/volumes/…`, hostPath
    /// at its own path.
    ///
    /// # Errors
    ///
    /// [`SpecError::Field`] naming `spec.volumes[i]` for an unusable pod identity or volume
    /// name, a duplicate name, a relative hostPath, an unknown hostPath type or emptyDir
    /// medium, a bad `sizeLimit`, or a volume type that needs the API server.
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
            if !crate::pod::spec::is_safe_path_component(&volume.name) {
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
            pod: id.display,
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
            host_path: pod_dir.join(EMPTY_DIR_PLUGIN).join(&volume.name),
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
    Err((
        "",
        format!(
            "volume type {} is not supported without the API server",
            volume_type(volume)
        ),
    ))
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
    use crate::pod::spec::test_pods::{node, pod_with};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
    use sergeant_messages::pods::core::{
        ConfigMapVolumeSource, EmptyDirVolumeSource, HostPathVolumeSource,
    };

    pub(crate) fn empty_dir(name: &str, medium: Option<&str>, size: Option<&str>) -> Volume {
        Volume {
            name: name.into(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: medium.map(Into::into),
                size_limit: size.map(|s| ApiQuantity(s.into())),
            }),
            ..Default::default()
        }
    }

    pub(crate) fn host_path(name: &str, path: &str, kind: Option<&str>) -> Volume {
        Volume {
            name: name.into(),
            host_path: Some(HostPathVolumeSource {
                path: path.into(),
                type_: kind.map(Into::into),
            }),
            ..Default::default()
        }
    }

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
    fn what_the_node_cannot_provide_is_refused_precisely() {
        let config_map = Volume {
            name: "cfg".into(),
            config_map: Some(ConfigMapVolumeSource::default()),
            ..Default::default()
        };
        let error = plan(vec![empty_dir("a", None, None), config_map])
            .unwrap_err()
            .to_string();
        assert_eq!(error, "pod ns/web: spec.volumes[1]: volume type configMap is not supported without the API server");
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
