//! sergeant's work on the node's own files: cgroups, the mount table, node facts from procfs,
//! a pod's volumes and the small files its containers need. Everything here is blocking I/O
//! that carries out what `sergeant_core` decided; the actors call it on the thread their file
//! work rules say.
//!
//! Entry points: [`volumes::setup_volumes`] and [`volumes::teardown_pod_dir`] for a pod's
//! volumes, [`cgroup::ensure_pod_cgroup`] for its cgroup, [`pod_files`] for its hosts file, log
//! directory and termination-message file, [`log_rotation`] for container logs,
//! [`machine::memory_capacity`] and [`machine::logical_cpus`] for the node's memory and CPUs
//! ([`cpu_list`] reads Linux's list of online CPUs), [`checkpoint`] for state that outlives
//! the process, [`node::node_context`] for the node facts a pod's translation is made with,
//! [`stats`] for every number the Summary API and the eviction manager read, [`static_pods`]
//! for the manifests in `staticPodPath`, [`cni`] for the CNI configuration the runtime loads.
//! What differs between unix and Windows nodes (file modes, filesystem sizes, mounts,
//! subPaths) is in files of its own: [`file_mode`], [`filesystem`], and the `*_linux.rs` /
//! `*_windows.rs` halves of `volumes`.

pub mod address;
pub mod apparmor;
pub mod cgroup;
pub mod checkpoint;
pub mod cni;
pub mod cpu_list;
pub mod dns;
pub mod file_mode;
pub mod filesystem;
pub mod log_dirs;
pub mod log_rotation;
pub mod machine;
pub mod mountinfo;
pub mod node;
pub mod pod_files;
pub mod static_pods;
pub mod stats;
pub mod swap;
pub mod termination;
pub mod volumes;
