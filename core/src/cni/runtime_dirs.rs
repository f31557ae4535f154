//! Where the runtime keeps its CNI configuration and plugin binaries, as it says in the `config`
//! entry of a verbose CRI `Status` answer (containerd: its CRI plugin's configuration as JSON,
//! whose `cni` object holds `confDir` and `binDir`, or `binDirs` where it takes several).
//! Entry point: [`RuntimeCniDirs::from_status_config`].

use serde_json::Value;

/// The key of a verbose `Status` answer's `info` map holding the runtime's configuration.
pub const STATUS_CONFIG_KEY: &str = "config";

/// The CNI directories a runtime names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeCniDirs {
    /// The configuration directory; `None` when the runtime names none.
    pub conf_dir: Option<String>,
    /// The plugin binary directories, in the runtime's order; empty when it names none.
    pub bin_dirs: Vec<String>,
}

/// The runtime's configuration entry is not JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the runtime's status config is not JSON: {0}")]
pub struct StatusConfigError(String);

impl RuntimeCniDirs {
    /// The directories named in the runtime's status `config` (empty fields when it names
    /// none).
    ///
    /// # Errors
    /// [`StatusConfigError`] when `config` is not JSON.
    pub fn from_status_config(config: &str) -> Result<Self, StatusConfigError> {
        let value: Value =
            serde_json::from_str(config).map_err(|err| StatusConfigError(err.to_string()))?;
        let cni = &value["cni"];
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let mut bin_dirs: Vec<String> = cni["binDirs"]
            .as_array()
            .map(|dirs| dirs.iter().filter_map(text).collect())
            .unwrap_or_default();
        if bin_dirs.is_empty() {
            bin_dirs.extend(text(&cni["binDir"]));
        }
        Ok(Self {
            conf_dir: text(&cni["confDir"]),
            bin_dirs,
        })
    }
}
