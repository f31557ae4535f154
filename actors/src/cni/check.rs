//! One check of the CNI configuration, blocking (run on the blocking pool): read the file the
//! runtime loads from the configuration directory and judge it with this platform's check
//! ([`super::platform::judge`]). Entry point: [`check`].

use std::path::Path;

use sergeant_core::cni::{ConfigFile, NetworkReadiness};
use sergeant_host::cni::read_loaded_config;

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Checked {
    /// The verdict.
    pub(super) readiness: NetworkReadiness,
    /// The file judged; `None` when there was none to read.
    pub(super) file: Option<String>,
    /// What was checked of the plugin binaries, for the status line.
    pub(super) binaries: String,
}

/// Reads and judges the configuration in `conf_dir`, the plugin binaries looked for in
/// `bin_dirs` where this platform's check does. A file or directory that cannot be read is a
/// verdict of not ready naming it: the runtime cannot load what cannot be read either.
pub(super) fn check(conf_dir: &Path, bin_dirs: &[std::path::PathBuf]) -> Checked {
    let dir = conf_dir.display().to_string();
    let loaded = match read_loaded_config(conf_dir) {
        Ok(loaded) => loaded,
        Err(err) => {
            return Checked {
                readiness: NetworkReadiness::not_ready(format!("cni config not readable: {err}")),
                file: None,
                binaries: "plugin binaries not checked".to_owned(),
            }
        }
    };
    let files: Vec<ConfigFile<'_>> = loaded
        .iter()
        .map(|file| ConfigFile {
            name: &file.name,
            text: &file.text,
        })
        .collect();
    let (readiness, binaries) = super::platform::judge(&dir, &files, bin_dirs);
    Checked {
        readiness,
        file: loaded.map(|file| file.name),
        binaries,
    }
}
