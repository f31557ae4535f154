//! A pod's volumes on the node: the paths of its [`VolumePlan`](sergeant_core::volumes::VolumePlan)
//! made real before the sandbox starts and their content kept current ([`setup_volumes`],
//! [`refresh_api_volumes`], written with the [`atomic`] layout), a container's subPaths bound
//! safely inside them ([`prepare_sub_paths`]), the volumes alone torn down once the pod has
//! terminated ([`teardown_pod_volumes`]), and all of it removed after the pod is gone
//! ([`teardown_pod_dir`]). Blocking I/O.

pub mod atomic;
mod error;
mod host_path;
mod setup;

#[cfg(target_os = "linux")]
#[path = "mounts_linux.rs"]
mod mounts;
#[cfg(windows)]
#[path = "mounts_windows.rs"]
mod mounts;
#[cfg(unix)]
#[path = "ownership_unix.rs"]
mod ownership;
#[cfg(windows)]
#[path = "ownership_windows.rs"]
mod ownership;
#[cfg(target_os = "linux")]
#[path = "subpath_linux.rs"]
mod subpath;
#[cfg(windows)]
#[path = "subpath_windows.rs"]
mod subpath;

pub use error::VolumeFileError;
pub use setup::{
    pod_volumes_exist, refresh_api_volumes, setup_volumes, teardown_pod_dir, teardown_pod_volumes,
};
pub use subpath::prepare_sub_paths;
