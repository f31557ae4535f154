//! `failSwapOn` at start-up: with swap on, sergeant refuses to start unless the file says
//! `failSwapOn: false`, as upstream's kubelet does. Entry point: [`refuse_swap`].

use std::path::Path;

use sergeant_config::{locate_field, NodeConfig};
use sergeant_host::swap::{active_swap, PROC_SWAPS};

/// Checks the node's swap against `failSwapOn` of `config`, read from `file`.
///
/// # Errors
/// A one-line reason naming the file, the line of `failSwapOn` (when written), the field and
/// the swap areas in use; or that `/proc/swaps` cannot be read.
pub fn refuse_swap(file: &Path, config: &NodeConfig) -> Result<(), String> {
    if !config.kubelet.fail_swap_on {
        return Ok(());
    }
    let shown = file.display();
    let areas = active_swap(Path::new(PROC_SWAPS))
        .map_err(|error| format!("{shown}: failSwapOn: cannot read {PROC_SWAPS}: {error}"))?;
    if areas.is_empty() {
        return Ok(());
    }
    let place = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| locate_field(&text, &["failSwapOn"]))
        .map_or_else(|| shown.to_string(), |at| format!("{shown}:{}", at.line));
    Err(format!(
        "{place}: failSwapOn: swap is on ({}): turn it off (swapoff -a) or set failSwapOn: false \
         (true is the default)",
        areas.join(", ")
    ))
}
