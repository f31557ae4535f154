//! The Windows node's judgement of its CNI configuration: `sergeant_core::cni::windows`, which
//! checks the file for the Windows plugins (HNS networks, IPAM, policies, DNS). Entry point:
//! [`judge`].

use std::path::PathBuf;

use sergeant_core::cni::windows::windows_readiness;
use sergeant_core::cni::{ConfigFile, NetworkReadiness};

/// The verdict on `files` of directory `dir`. The plugin binaries are not looked for: the
/// Windows check reads the configuration only.
pub(super) fn judge(
    dir: &str,
    files: &[ConfigFile<'_>],
    _bin_dirs: &[PathBuf],
) -> (NetworkReadiness, String) {
    (
        windows_readiness(dir, files),
        "plugin binaries not checked on Windows".to_owned(),
    )
}
