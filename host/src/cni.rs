//! Reading what the node's CNI configuration needs checked: the file the runtime loads from its
//! configuration directory ([`read_loaded_config`]) and the plugin binaries in its binary
//! directories ([`plugin_binaries`]). Both block and are bounded — entries listed per
//! directory, bytes read per file — so the `cni-adapter` actor runs them on the blocking pool.

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use sergeant_core::cni::chosen_file;

/// The most entries a CNI directory is listed for; past it the directory is refused.
pub const MAX_ENTRIES: usize = 4096;
/// The most bytes a configuration file is read for; a larger one is refused.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The configuration file the runtime loads, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedConfig {
    /// Its file name in the directory.
    pub name: String,
    /// What it holds.
    pub text: String,
}

/// Why a CNI directory or file could not be read; each names the path.
#[derive(Debug, thiserror::Error)]
pub enum CniReadError {
    /// The directory could not be listed.
    #[error("{path}: cannot list: {source}")]
    List {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The directory holds more entries than are listed.
    #[error("{path}: more than {MAX_ENTRIES} entries")]
    TooManyEntries {
        /// The directory.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is larger than a configuration file is read for.
    #[error("{path}: larger than {MAX_CONFIG_BYTES} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not UTF-8 text.
    #[error("{path}: not UTF-8 text")]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

/// The names of `dir`'s entries that are regular files (symlinks followed); `None` when the
/// directory does not exist.
fn file_names(dir: &Path) -> Result<Option<Vec<String>>, CniReadError> {
    let list_error = |source| CniReadError::List {
        path: dir.to_owned(),
        source,
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(list_error(err)),
    };
    let mut names = Vec::new();
    for (n, entry) in entries.enumerate() {
        if n >= MAX_ENTRIES {
            return Err(CniReadError::TooManyEntries {
                path: dir.to_owned(),
            });
        }
        let entry = entry.map_err(list_error)?;
        let is_file = fs::metadata(entry.path()).is_ok_and(|meta| meta.is_file());
        if let (true, Some(name)) = (is_file, entry.file_name().to_str()) {
            names.push(name.to_owned());
        }
    }
    Ok(Some(names))
}

/// The configuration file the runtime loads from `dir` (the first `.conf`, `.conflist` or
/// `.json` by name); `None` when there is none, or no such directory.
///
/// # Errors
/// [`CniReadError`] when the directory cannot be listed or the file cannot be read, is over
/// [`MAX_CONFIG_BYTES`] or is not text.
pub fn read_loaded_config(dir: &Path) -> Result<Option<LoadedConfig>, CniReadError> {
    let Some(names) = file_names(dir)? else {
        return Ok(None);
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let Some(name) = chosen_file(&refs) else {
        return Ok(None);
    };
    let path = dir.join(name);
    let read_error = |source| CniReadError::Read {
        path: path.clone(),
        source,
    };
    let mut bytes = Vec::new();
    fs::File::open(&path)
        .and_then(|file| file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(CniReadError::TooLarge { path });
    }
    let text =
        String::from_utf8(bytes).map_err(|_| CniReadError::NotText { path: path.clone() })?;
    Ok(Some(LoadedConfig {
        name: name.to_owned(),
        text,
    }))
}

/// The names of the plugin binaries in `dirs` (regular files; a directory that does not exist
/// holds none).
///
/// # Errors
/// [`CniReadError`] when a directory cannot be listed or holds over [`MAX_ENTRIES`] entries.
pub fn plugin_binaries(dirs: &[PathBuf]) -> Result<BTreeSet<String>, CniReadError> {
    let mut found = BTreeSet::new();
    for dir in dirs {
        found.extend(file_names(dir)?.unwrap_or_default());
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_config_by_name_is_read_and_others_are_left() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        fs::write(dir.join("20-b.conflist"), "second").unwrap();
        fs::write(dir.join("10-a.conf"), "first").unwrap();
        fs::write(dir.join("00-notes.txt"), "not a config").unwrap();
        fs::create_dir(dir.join("05-dir.conf")).unwrap();
        let loaded = read_loaded_config(dir).unwrap().unwrap();
        assert_eq!(loaded.name, "10-a.conf");
        assert_eq!(loaded.text, "first");
    }

    #[test]
    fn a_missing_or_empty_directory_has_no_config() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        assert_eq!(read_loaded_config(dir).unwrap(), None);
        assert_eq!(read_loaded_config(&dir.join("nope")).unwrap(), None);
        assert!(plugin_binaries(&[dir.join("nope")]).unwrap().is_empty());
    }

    #[test]
    fn an_oversized_file_is_refused_naming_it() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let big = "x".repeat(usize::try_from(MAX_CONFIG_BYTES).unwrap() + 1);
        fs::write(dir.join("10-big.conflist"), big).unwrap();
        let err = read_loaded_config(dir).unwrap_err();
        assert!(matches!(err, CniReadError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("10-big.conflist"), "{err}");
    }

    #[test]
    fn binaries_are_the_files_of_every_directory() {
        let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (first.path().to_owned(), second.path().to_owned());
        fs::write(a.join("bridge"), "").unwrap();
        fs::write(b.join("portmap"), "").unwrap();
        fs::create_dir(b.join("not-a-binary")).unwrap();
        let found = plugin_binaries(&[a, b]).unwrap();
        assert_eq!(
            found,
            BTreeSet::from(["bridge".to_owned(), "portmap".to_owned()])
        );
    }
}
