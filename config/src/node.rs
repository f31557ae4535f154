//! `NodeConfig`: everything the agent is configured with — both documents of the file and the
//! flags — loaded, checked and merged in one call.

use std::path::Path;

use serde::Serialize;

use crate::document;
use crate::error::ConfigError;
use crate::flags::{self, CommandLine, FlagOverrides};
use crate::kubelet::KubeletConfiguration;
use crate::sergeant::SergeantConfiguration;
use crate::warning::ConfigWarning;

/// Where the machine hostname is read from when no `--hostname-override` is given.
const HOSTNAME_FILE: &str = "/proc/sys/kernel/hostname";

/// The agent's whole configuration. Actors get it as a read-only snapshot; the config watcher
/// diffs two of them (`crate::diff`) to decide what can change live.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeConfig {
    /// The upstream KubeletConfiguration document, flags applied.
    pub kubelet: KubeletConfiguration,
    /// The SergeantConfiguration document (defaults when the file has none).
    pub sergeant: SergeantConfiguration,
    /// Flag-only settings.
    pub command_line: CommandLine,
    /// Settings of the file accepted without the effect upstream gives them (logged at start
    /// and on each reload, shown at `/debug/config`); not compared by `diff`.
    pub warnings: Vec<ConfigWarning>,
}

impl NodeConfig {
    /// Reads the configuration file, parses and checks it, and applies the flags over it.
    ///
    /// # Errors
    ///
    /// `ConfigError::Read` when the file cannot be read; `ConfigError::Invalid` (naming the
    /// file, line, field and reason) when its content is not a valid configuration.
    pub fn load(path: &Path, flags: &FlagOverrides) -> Result<NodeConfig, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            reason: without_os_code(&error.to_string()),
            file: file.clone(),
        })?;
        Self::parse(&text, &file, flags)
    }

    /// Parses configuration text (one KubeletConfiguration document and optionally one
    /// SergeantConfiguration document) and applies the flags; `source_name` names the text in
    /// errors.
    ///
    /// # Errors
    ///
    /// `ConfigError::Invalid` naming the source, line, field and reason of the first problem.
    pub fn parse(
        text: &str,
        source_name: &str,
        flags: &FlagOverrides,
    ) -> Result<NodeConfig, ConfigError> {
        let mut documents = document::parse(text, source_name)?;
        let command_line = flags::apply(flags, &mut documents);
        Ok(NodeConfig {
            kubelet: documents.kubelet,
            sergeant: documents.sergeant,
            command_line,
            warnings: documents.warnings,
        })
    }

    /// The name this node registers under: `--hostname-override`, else the machine hostname,
    /// trimmed and lowercased as upstream does.
    ///
    /// # Errors
    ///
    /// `ConfigError::NodeName` when there is no override and the hostname cannot be read or
    /// is empty.
    pub fn node_name(&self) -> Result<String, ConfigError> {
        let name = match &self.command_line.hostname_override {
            Some(name) => name.clone(),
            None => {
                std::fs::read_to_string(HOSTNAME_FILE).map_err(|error| ConfigError::NodeName {
                    reason: format!("{HOSTNAME_FILE}: {}", without_os_code(&error.to_string())),
                })?
            }
        };
        let name = name.trim().to_lowercase();
        if name.is_empty() {
            return Err(ConfigError::NodeName {
                reason: "the node name is empty".to_string(),
            });
        }
        Ok(name)
    }
}

/// "No such file or directory (os error 2)" → "No such file or directory".
fn without_os_code(message: &str) -> String {
    match message.rfind(" (os error ") {
        Some(index) if message.ends_with(')') => message[..index].to_string(),
        _ => message.to_string(),
    }
}
