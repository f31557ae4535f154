//! Whether the node has swap turned on, for `failSwapOn`. Entry point: [`active_swap`].

use std::io;
use std::path::Path;

/// Where the kernel lists the swap areas in use.
pub const PROC_SWAPS: &str = "/proc/swaps";

/// The swap areas in use, by name, as listed in `proc_swaps` (normally [`PROC_SWAPS`]: a
/// header line, then one line per area).
///
/// # Errors
/// The file cannot be read.
pub fn active_swap(proc_swaps: &Path) -> io::Result<Vec<String>> {
    let text = std::fs::read_to_string(proc_swaps)?;
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_are_listed_without_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("swaps");
        std::fs::write(&file, "Filename\tType\tSize\tUsed\tPriority\n").unwrap();
        assert!(active_swap(&file).unwrap().is_empty());
        std::fs::write(
            &file,
            "Filename\tType\tSize\tUsed\tPriority\n/dev/vdb2 partition 1048572 0 -2\n/swapfile file 524284 0 -3\n",
        )
        .unwrap();
        assert_eq!(active_swap(&file).unwrap(), vec!["/dev/vdb2", "/swapfile"]);
        assert!(active_swap(&dir.path().join("missing")).is_err());
    }
}
