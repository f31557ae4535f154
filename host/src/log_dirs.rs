//! Listing the pod log root (`<pod log root>/<namespace>_<name>_<uid>`), for the GC actor to
//! find the directories `sergeant_core::gc::log_dirs` calls stale. Blocking.

use std::io;
use std::path::Path;

/// The names of the directories in `root`; none when `root` does not exist. Blocking.
///
/// # Errors
/// The I/O error of reading `root`.
pub fn list(root: &Path) -> io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_takes_directories_only_and_a_missing_root_is_empty() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("ns_a_u1")).unwrap();
        std::fs::write(root.path().join("ns_b_u2"), "a file").unwrap();
        assert_eq!(list(root.path()).unwrap(), ["ns_a_u1"]);
        assert!(list(&root.path().join("missing")).unwrap().is_empty());
    }
}
