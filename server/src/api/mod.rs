//! The kubelet API's own endpoints (behind authentication on `port`): container logs
//! ([`container_logs`]), running a command in a container ([`run`]), and the streams of
//! exec, attach and port-forward ([`stream`]), each finding its container through [`target`].

mod container_logs;
mod cri_log;
mod log_file;
mod log_query;
mod run;
mod running_pods;
mod stats;
mod stream;
mod target;

pub use container_logs::container_logs;
pub use run::run;
pub use running_pods::running_pods;
pub use stats::routes as stats_routes;
pub use stream::{attach, exec, port_forward};
