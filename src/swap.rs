//! `failSwapOn` at start-up: with swap on, sergeant refuses to start unless the file says
//! `failSwapOn: false`, as upstream's kubelet does. Entry point: [`refuse_swap`].

use std::path::{Path, PathBuf};

use sergeant_config::{locate_field, NodeConfig};
use sergeant_host::swap::{active_swap, PROC_SWAPS};

/// Why sergeant refuses to start over swap; `main` exits with its message as for a bad
/// configuration. One line naming the configuration file (and the line of `failSwapOn` when
/// it is written there) and the field.
#[derive(Debug, thiserror::Error)]
pub enum SwapRefusal {
    /// `/proc/swaps` could not be read, so whether swap is on is not known.
    #[error("{}: failSwapOn: cannot read {PROC_SWAPS}: {source}", file.display())]
    Unreadable {
        /// The configuration file.
        file: PathBuf,
        /// Why `/proc/swaps` could not be read.
        source: std::io::Error,
    },
    /// Swap is on.
    #[error(
        "{}: failSwapOn: swap is on ({}): turn it off (swapoff -a) or set failSwapOn: false \
         (true is the default)",
        place(file, *line),
        areas.join(", ")
    )]
    SwapOn {
        /// The configuration file.
        file: PathBuf,
        /// The line of `failSwapOn` in it, when it is written there.
        line: Option<usize>,
        /// The swap areas in use.
        areas: Vec<String>,
    },
}

/// `file:line`, or `file` without a line.
fn place(file: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", file.display()),
        None => file.display().to_string(),
    }
}

/// Checks the node's swap against `failSwapOn` of `config`, read from `file`.
///
/// # Errors
/// [`SwapRefusal::SwapOn`] naming the swap areas in use, or [`SwapRefusal::Unreadable`] when
/// `/proc/swaps` cannot be read.
pub fn refuse_swap(file: &Path, config: &NodeConfig) -> Result<(), SwapRefusal> {
    if !config.kubelet.fail_swap_on {
        return Ok(());
    }
    let areas = active_swap(Path::new(PROC_SWAPS)).map_err(|source| SwapRefusal::Unreadable {
        file: file.to_path_buf(),
        source,
    })?;
    if areas.is_empty() {
        return Ok(());
    }
    let line = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| locate_field(&text, &["failSwapOn"]))
        .map(|at| at.line);
    Err(SwapRefusal::SwapOn {
        file: file.to_path_buf(),
        line,
        areas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_file_the_line_when_known_and_the_areas() {
        let on = |line| SwapRefusal::SwapOn {
            file: PathBuf::from("/etc/sergeant/config.yaml"),
            line,
            areas: vec!["/dev/vdb2".to_owned(), "/swapfile".to_owned()],
        };
        let advice = "failSwapOn: swap is on (/dev/vdb2, /swapfile): turn it off (swapoff -a) \
                      or set failSwapOn: false (true is the default)";
        assert_eq!(
            on(Some(7)).to_string(),
            format!("/etc/sergeant/config.yaml:7: {advice}")
        );
        assert_eq!(
            on(None).to_string(),
            format!("/etc/sergeant/config.yaml: {advice}")
        );
    }
}
