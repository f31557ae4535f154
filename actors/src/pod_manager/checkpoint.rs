//! The pod manager's allocation checkpoint (`sergeant_core::allocation::Allocations`, in
//! `<rootDir>/allocated_pods.json`): read when it starts, so a pod this node ran before is
//! admitted at what it was allocated — a resize that waited still waits, and is tried again
//! (`pods_added`) — and written whenever the allocations of the pods it runs change, once
//! every source has been read (before, a pod not seen yet would lose its entry).

use std::path::PathBuf;
use std::sync::Arc;

use sergeant_core::allocation::{Allocations, CheckpointError, CHECKPOINT_FILE};
use sergeant_messages::pods::core::Pod;

use super::actor::PodManager;

/// Why the checkpoint was not read or written.
#[derive(Debug, thiserror::Error)]
enum Fault {
    /// The file could not be read or replaced.
    #[error(transparent)]
    File(#[from] std::io::Error),
    /// What it holds (or was to hold) is not allocations.
    #[error(transparent)]
    Content(#[from] CheckpointError),
}

impl PodManager {
    /// Where the checkpoint is, once the node's settings are known.
    fn checkpoint_path(&self) -> Option<PathBuf> {
        Some(self.node.as_ref()?.root_dir.join(CHECKPOINT_FILE))
    }

    /// Reads the checkpoint a previous process (or incarnation) left; an unreadable one is
    /// said and ignored: the pods are then admitted at what they ask.
    pub(super) fn load_allocations(&mut self) {
        let Some(path) = self.checkpoint_path() else {
            return;
        };
        let read = sergeant_host::checkpoint::read(&path)
            .map_err(Fault::from)
            .and_then(|bytes| Ok(bytes.map(|b| Allocations::parse(&b)).transpose()?));
        match read {
            Ok(loaded) => self.loaded = loaded.unwrap_or_default(),
            Err(error) => tracing::warn!("{}: not read: {error}", path.display()),
        }
    }

    /// `pod` (of UID `uid`) as it is to be admitted: at the allocation the checkpoint holds for
    /// it, when it ran here before.
    pub(super) fn at_allocation(&self, uid: &str, pod: &Arc<Pod>) -> Arc<Pod> {
        self.loaded
            .apply(uid, pod)
            .map_or_else(|| Arc::clone(pod), Arc::new)
    }

    /// Writes the allocations of the pods that hold a share of the node, when every source has
    /// been read (`synced`) and they changed since the last write.
    pub(super) fn save_allocations(&mut self, synced: bool) {
        let Some(path) = self.checkpoint_path().filter(|_| synced) else {
            return;
        };
        let now = {
            let assigned = self.deps.assignments.borrow();
            Allocations::of(assigned.iter().filter_map(|(uid, a)| {
                let pod = a.pod.as_deref().filter(|_| a.terminating.is_none())?;
                Some((uid.as_str(), pod))
            }))
        };
        if self.saved.as_ref() == Some(&now) {
            return;
        }
        let written = now
            .to_bytes()
            .map_err(Fault::from)
            .and_then(|bytes| Ok(sergeant_host::checkpoint::write(&path, &bytes)?));
        match written {
            Ok(()) => self.saved = Some(now),
            Err(error) => tracing::warn!("{}: not written: {error}", path.display()),
        }
    }
}
