//! The Linux node's judgement of its CNI configuration: `sergeant_core::cni::linux`, with the
//! plugin binaries read from the runtime's binary directories when it names them. Entry point:
//! [`judge`].

use std::path::PathBuf;

use sergeant_core::cni::linux::{linux_readiness, PluginBinaries};
use sergeant_core::cni::{ConfigFile, NetworkReadiness};
use sergeant_host::cni::plugin_binaries;

/// The verdict on `files` of directory `dir`, and what was checked of the plugin binaries in
/// `bin_dirs` (not checked when the runtime names no directory, or one cannot be listed: the
/// verdict then claims nothing about them).
pub(super) fn judge(
    dir: &str,
    files: &[ConfigFile<'_>],
    bin_dirs: &[PathBuf],
) -> (NetworkReadiness, String) {
    if bin_dirs.is_empty() {
        return (
            linux_readiness(dir, files, None),
            "plugin binaries not checked: the runtime names no binary directory".to_owned(),
        );
    }
    let shown: Vec<String> = bin_dirs.iter().map(|d| d.display().to_string()).collect();
    match plugin_binaries(bin_dirs) {
        Ok(names) => {
            let found = PluginBinaries {
                dirs: shown.clone(),
                names,
            };
            (
                linux_readiness(dir, files, Some(&found)),
                format!("plugin binaries checked in {}", shown.join(", ")),
            )
        }
        Err(err) => (
            linux_readiness(dir, files, None),
            format!("plugin binaries not checked: {err}"),
        ),
    }
}
