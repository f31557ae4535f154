//! Applying a reload without half-applying it: the configuration in force after a reload takes
//! every live change from the new file and keeps the running value of every field that needs
//! a restart.

use serde_json::Value;

use crate::diff::{Apply, ConfigDiff};
use crate::kubelet::KubeletConfiguration;
use crate::node::NodeConfig;

impl NodeConfig {
    /// The configuration in force once `new` is accepted: `new` for the fields `changes` marks
    /// live, this configuration's values for those that require a restart (command-line
    /// settings always do).
    ///
    /// # Errors
    /// When the merged KubeletConfiguration does not read back, which means its serialized
    /// form and its parser disagree; the caller keeps the running configuration.
    pub fn adopt_live(
        &self,
        new: &NodeConfig,
        changes: &ConfigDiff,
    ) -> Result<NodeConfig, serde_json::Error> {
        let mut kubelet = serde_json::to_value(&new.kubelet)?;
        let running = serde_json::to_value(&self.kubelet)?;
        for change in changes
            .changes
            .iter()
            .filter(|c| c.apply == Apply::RestartRequired)
        {
            if change.field.starts_with("sergeant.") || change.field.starts_with("commandLine.") {
                continue;
            }
            let path: Vec<&str> = change.field.split('.').collect();
            match lookup(&running, &path) {
                Some(value) => put(&mut kubelet, &path, value.clone()),
                None => remove(&mut kubelet, &path),
            }
        }
        Ok(NodeConfig {
            kubelet: serde_json::from_value::<KubeletConfiguration>(kubelet)?,
            sergeant: new.sergeant.clone(),
            command_line: self.command_line.clone(),
            warnings: new.warnings.clone(),
        })
    }
}

fn lookup<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |node, key| node.get(key))
}

fn put(value: &mut Value, path: &[&str], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = value;
    for key in parents {
        node = &mut node[*key];
    }
    if let Value::Object(map) = node {
        map.insert((*last).to_owned(), new);
    }
}

fn remove(value: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = Some(value);
    for key in parents {
        node = node.and_then(|n| n.get_mut(*key));
    }
    if let Some(Value::Object(map)) = node {
        map.remove(*last);
    }
}
