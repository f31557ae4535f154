//! Where the CNI configuration is: the `--cni-conf-dir` flag, else the directory the runtime
//! names in its verbose CRI `Status`; the plugin binary directories always come from the
//! runtime. Entry point: [`locate`].

use std::path::PathBuf;

use sergeant_core::cni::runtime_dirs::{RuntimeCniDirs, StatusConfigError, STATUS_CONFIG_KEY};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;

use crate::runtime::RuntimePort;

/// Who named the configuration directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// `--cni-conf-dir`.
    Flag,
    /// The runtime's status.
    Runtime,
}

/// The directories to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Location {
    /// The configuration directory and who named it; `None` when nobody did.
    pub(super) conf_dir: Option<(PathBuf, Source)>,
    /// The runtime's plugin binary directories (empty when it names none).
    pub(super) bin_dirs: Vec<PathBuf>,
}

/// Why the runtime's directories are not known.
#[derive(Debug, thiserror::Error)]
pub(super) enum LocateError {
    /// The status call failed.
    #[error("the runtime's status: {0}")]
    Runtime(#[from] RuntimeError),
    /// Its configuration is not JSON.
    #[error(transparent)]
    Config(#[from] StatusConfigError),
}

/// Finds the directories: `flag` for the configuration when set, the runtime for the rest.
/// Beside them, why the runtime named none when it could not be asked (with `flag` set the
/// configuration is still known; only the binary directories are lost).
pub(super) async fn locate(
    port: &RuntimePort,
    flag: Option<PathBuf>,
) -> (Location, Option<LocateError>) {
    let (dirs, error) = match runtime_dirs(port).await {
        Ok(dirs) => (dirs, None),
        Err(err) => (RuntimeCniDirs::default(), Some(err)),
    };
    let conf_dir = match flag {
        Some(dir) => Some((dir, Source::Flag)),
        None => dirs
            .conf_dir
            .map(|dir| (PathBuf::from(dir), Source::Runtime)),
    };
    let location = Location {
        conf_dir,
        bin_dirs: dirs.bin_dirs.into_iter().map(PathBuf::from).collect(),
    };
    (location, error)
}

/// The directories the runtime names (none when its status carries no configuration).
async fn runtime_dirs(port: &RuntimePort) -> Result<RuntimeCniDirs, LocateError> {
    let status = port.call(cri::StatusRequest { verbose: true }).await?;
    match status.info.get(STATUS_CONFIG_KEY) {
        Some(config) => Ok(RuntimeCniDirs::from_status_config(config)?),
        None => Ok(RuntimeCniDirs::default()),
    }
}
