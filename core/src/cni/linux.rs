//! The Linux CNI configuration, checked for what the runtime does not check when it loads the
//! file but a pod's network set-up needs: a network `name`, for a list its `cniVersion` and at
//! least one plugin, every plugin a `type`, and every plugin's binary among the runtime's
//! plugin binaries. Which binaries exist is the caller's reading ([`PluginBinaries`]).
//! Entry point: [`linux_readiness`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::json::{Fault, Obj};
use super::{readiness, ConfigFault, ConfigFile, NetworkReadiness};

/// The plugin binaries the runtime can run: the directories it looks in and the file names
/// found there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginBinaries {
    /// The runtime's CNI binary directories, for messages.
    pub dirs: Vec<String>,
    /// The file names in them.
    pub names: BTreeSet<String>,
}

/// The node's `NetworkReady` from the files of its CNI configuration directory `dir`: the
/// file the runtime loads must pass [`check_linux_config`] ([`readiness`]). `binaries` is
/// `None` when the binary directories are not known: the binaries are then not checked.
#[must_use]
pub fn linux_readiness(
    dir: &str,
    files: &[ConfigFile<'_>],
    binaries: Option<&PluginBinaries>,
) -> NetworkReadiness {
    readiness(dir, files, |file| check_linux_config(file, binaries))
}

/// Checks one configuration file: a `.conflist` as a list of plugins, any other as a single
/// network (as the runtime reads them, by extension).
///
/// # Errors
/// The first fault found, naming the file, the field and the reason.
pub fn check_linux_config(
    file: ConfigFile<'_>,
    binaries: Option<&PluginBinaries>,
) -> Result<(), ConfigFault> {
    let value: Value = serde_json::from_str(file.text).map_err(|err| ConfigFault {
        file: file.name.to_owned(),
        field: String::new(),
        reason: format!("not JSON: {err}"),
    })?;
    let list = file.name.ends_with(".conflist");
    check_document(&value, list, binaries).map_err(|(field, reason)| ConfigFault {
        file: file.name.to_owned(),
        field,
        reason,
    })
}

/// The whole document: a list's header and each plugin, or a single network.
fn check_document(
    value: &Value,
    list: bool,
    binaries: Option<&PluginBinaries>,
) -> Result<(), Fault> {
    let top = Obj::at(String::new(), value)?;
    top.str("name")?;
    let plugins = if list {
        top.str("cniVersion")?;
        let plugins = top.objects("plugins")?;
        if plugins.is_empty() {
            return Err(top.fault("plugins", "is empty: no plugin networks the pods"));
        }
        plugins
    } else {
        vec![top]
    };
    plugins
        .iter()
        .try_for_each(|plugin| check_plugin(plugin, binaries))
}

/// One plugin: its `type`, and that type's binary when the binaries are known.
fn check_plugin(plugin: &Obj<'_>, binaries: Option<&PluginBinaries>) -> Result<(), Fault> {
    let kind = plugin.str("type")?;
    match binaries {
        Some(found) if !found.names.contains(kind) => Err(plugin.fault(
            "type",
            format!(
                "no plugin binary {kind:?} in {}",
                if found.dirs.is_empty() {
                    "the runtime's CNI binary directories (it names none)".to_owned()
                } else {
                    found.dirs.join(", ")
                }
            ),
        )),
        _ => Ok(()),
    }
}
