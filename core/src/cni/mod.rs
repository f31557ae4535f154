//! Network readiness from the node's CNI configuration, decided from file names and contents
//! (the reading is the caller's): which file the runtime will load ([`chosen_file`], as
//! containerd picks it) and whether it is usable ([`NetworkReadiness`]). The checks of the
//! Windows plugins are in [`windows`], those of a Linux node in [`linux`]; where the runtime
//! keeps the files is read from its status by [`runtime_dirs`]. The `cni-adapter` actor reads
//! the directory and reports the verdict beside the runtime's `NetworkReady`. The pod CIDR the
//! runtime is told is kept by [`pod_cidr`].

pub mod linux;
pub mod pod_cidr;
pub mod runtime_dirs;
pub mod windows;

mod json;

/// The reason of a `NetworkReady=false` condition, as containerd words it.
pub const NOT_READY_REASON: &str = "NetworkPluginNotReady";

/// The file extensions a CNI configuration directory is read for (libcni's).
const CONFIG_EXTENSIONS: [&str; 3] = [".conf", ".conflist", ".json"];

/// Whether pods can get a network, and why not: the `NetworkReady` runtime condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkReadiness {
    /// `NetworkReady`'s status.
    pub ready: bool,
    /// Empty when ready; [`NOT_READY_REASON`] otherwise.
    pub reason: String,
    /// What is wrong, naming the file and the field; empty when ready.
    pub message: String,
}

impl NetworkReadiness {
    /// Ready.
    #[must_use]
    pub fn ready() -> Self {
        Self {
            ready: true,
            reason: String::new(),
            message: String::new(),
        }
    }

    /// Not ready, because of `message`.
    #[must_use]
    pub fn not_ready(message: String) -> Self {
        Self {
            ready: false,
            reason: NOT_READY_REASON.to_owned(),
            message,
        }
    }
}

/// A configuration file's name and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile<'a> {
    /// The file name, or its path: what messages name.
    pub name: &'a str,
    /// Its contents.
    pub text: &'a str,
}

/// Of the names in a configuration directory, the one the runtime loads: the first by name
/// among `.conf`, `.conflist` and `.json` files (containerd loads one network).
#[must_use]
pub fn chosen_file<'a>(names: &[&'a str]) -> Option<&'a str> {
    names
        .iter()
        .copied()
        .filter(|name| CONFIG_EXTENSIONS.iter().any(|ext| name.ends_with(ext)))
        .min()
}

/// The node's `NetworkReady` from the files of its CNI configuration directory `dir`: the file
/// the runtime loads ([`chosen_file`]) must pass `check`, the platform's check of one file.
#[must_use]
pub fn readiness<T>(
    dir: &str,
    files: &[ConfigFile<'_>],
    check: impl FnOnce(ConfigFile<'_>) -> Result<T, ConfigFault>,
) -> NetworkReadiness {
    let names: Vec<&str> = files.iter().map(|f| f.name).collect();
    let Some(chosen) = chosen_file(&names) else {
        return NetworkReadiness::not_ready(format!(
            "cni config uninitialized: no network config (.conf, .conflist, .json) in {dir}"
        ));
    };
    let file = files.iter().find(|f| f.name == chosen).copied();
    match file.map(check) {
        Some(Ok(_)) => NetworkReadiness::ready(),
        Some(Err(fault)) => NetworkReadiness::not_ready(format!("cni config not usable: {fault}")),
        None => NetworkReadiness::not_ready(format!("cni config uninitialized: {chosen} vanished")),
    }
}

/// A fault in a configuration file: the file, the field (a path such as
/// `plugins[0].ipam.subnet`, or empty for the file as a whole) and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {}{reason}", if field.is_empty() { String::new() } else { format!("{field}: ") })]
pub struct ConfigFault {
    /// The file.
    pub file: String,
    /// Where in it.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

#[cfg(test)]
mod linux_tests;
#[cfg(test)]
mod tests;
