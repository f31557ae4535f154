//! Container log rotation, upstream's container log manager as an actor: keeps each running
//! container's log under `containerLogMaxSize`, with at most `containerLogMaxFiles` files
//! (older ones gzipped), and has the runtime reopen the log after each rotation.
//!
//! Entry point: [`ContainerLogManager`], a worker of the `node` supervisor. `pass` is one
//! check of every running container through the runtime port; the file operations are
//! `sergeant_host::log_rotation`'s.

mod actor;
mod pass;

pub use actor::ContainerLogManager;
