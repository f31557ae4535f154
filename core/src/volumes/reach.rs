//! How far a piece of a pod's file work reaches, which decides the thread the pod actor runs it
//! on (see its `file_work`).

/// How far a piece of file work reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Only places sergeant owns on local file systems: its root directory, the pod logs
    /// directory, cgroupfs and the tmpfs mounts it makes. Runs on the caller's thread.
    Own,
    /// Also host paths a pod spec names. Runs on the blocking pool.
    Host,
}
