//! The node's one stats reader: every number the Summary API and the eviction manager take
//! from the kernel and the filesystems — CPU, memory of the root cgroup, process count and
//! limit, filesystems (`statvfs`) and directory usage, network namespaces, a pod's volumes and
//! log directories; on Windows, CPU and memory from Windows' system calls instead ([`node`]'s
//! `node_windows.rs`, with [`process_list`]). Blocking; the stats provider actor calls
//! [`node::sample`] and [`pods::gather`] on a blocking thread and shares what they read with
//! its readers.

pub mod clock;
pub mod error;
pub mod fs;
pub mod memory;
pub mod network;
pub mod node;
pub mod pods;
pub mod process_list;
pub mod procfs;
pub mod volumes;

pub use clock::{time_of_ns, Clock};
pub use error::{HostStatsError, ParseError};
