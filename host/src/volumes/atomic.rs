//! Writing a set of files into a volume directory so that a reader in a container sees either
//! the old set or the new one, never a mix — upstream's atomic-writer layout:
//!
//! ```text
//! <volume>/..2024_05_01_12_00_00.123456789_1/   the files of one version
//! <volume>/..data -> ..2024_05_01_12_00_00.123456789_1
//! <volume>/key -> ..data/key                      what users see
//! ```
//!
//! A new version is written to a fresh timestamped directory, then `..data` is replaced by a
//! rename of a new symlink (atomic), then the user-visible links are added or removed and the
//! old version deleted. Nothing is written when the content and modes are unchanged.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Component, Path};

use sergeant_core::time::format_utc;
use sergeant_core::volumes::{FileContent, Payload};

use super::error::VolumeFileError;
use crate::file_mode::{create_file_with_mode, dir_builder, has_mode, set_mode, symlink};

/// The symlink naming the current version.
const DATA_LINK: &str = "..data";
/// The new `..data` link before it is renamed over the old one.
const NEW_DATA_LINK: &str = "..data_tmp";

/// Makes `dir` hold exactly `payload`, atomically for readers. Returns whether anything was
/// written. Blocking I/O.
///
/// # Errors
///
/// [`VolumeFileError::UnsafePath`] for a path that is absolute, holds `..` or starts with
/// `..`, [`VolumeFileError::BelowFile`] for two paths where one is the directory of the other,
/// or [`VolumeFileError::Io`] naming the path that failed.
pub fn write_payload(dir: &Path, payload: &Payload) -> Result<bool, VolumeFileError> {
    validate(payload)?;
    std::fs::create_dir_all(dir).map_err(VolumeFileError::io(dir))?;
    let data_link = dir.join(DATA_LINK);
    let old_version = match std::fs::read_link(&data_link) {
        Ok(target) => Some(target),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(VolumeFileError::io(&data_link)(e)),
    };
    if let Some(old) = &old_version {
        if matches(&dir.join(old), payload) {
            return Ok(false);
        }
    }
    let version = new_version_name();
    let version_dir = dir.join(&version);
    dir_builder(0o755)
        .create(&version_dir)
        .map_err(VolumeFileError::io(&version_dir))?;
    for (path, file) in payload {
        let target = version_dir.join(path);
        if let Some(parent) = target.parent() {
            dir_builder(0o755)
                .recursive(true)
                .create(parent)
                .map_err(VolumeFileError::io(parent))?;
        }
        write_file(&target, file).map_err(VolumeFileError::io(&target))?;
    }
    let new_link = dir.join(NEW_DATA_LINK);
    remove_if_present(&new_link).map_err(VolumeFileError::io(&new_link))?;
    symlink(Path::new(&version), &new_link).map_err(VolumeFileError::io(&new_link))?;
    std::fs::rename(&new_link, &data_link).map_err(VolumeFileError::io(&data_link))?;
    let visible = top_level(payload);
    for name in &visible {
        let link = dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            symlink(&Path::new(DATA_LINK).join(name), &link).map_err(VolumeFileError::io(&link))?;
        }
    }
    remove_stale(dir, &visible, &version)?;
    Ok(true)
}

/// Rejects paths that could escape the volume or clash with the layout's own names.
fn validate(payload: &Payload) -> Result<(), VolumeFileError> {
    for path in payload.keys() {
        let components: Vec<Component<'_>> = Path::new(path).components().collect();
        let plain =
            !components.is_empty() && components.iter().all(|c| matches!(c, Component::Normal(_)));
        if !plain || path.starts_with("..") {
            return Err(VolumeFileError::UnsafePath { path: path.clone() });
        }
        if let Some(parent) = payload
            .keys()
            .find(|other| path.starts_with(&format!("{other}/")))
        {
            return Err(VolumeFileError::BelowFile {
                path: path.clone(),
                parent: parent.clone(),
            });
        }
    }
    Ok(())
}

/// Whether the version directory `version` holds exactly `payload`, modes included.
fn matches(version: &Path, payload: &Payload) -> bool {
    let mut found = BTreeSet::new();
    if list_files(version, Path::new(""), &mut found).is_err() {
        return false;
    }
    found.len() == payload.len()
        && payload.iter().all(|(path, file)| {
            let target = version.join(path);
            found.contains(path)
                && has_mode(&target, file.mode)
                && std::fs::read(&target).is_ok_and(|data| data == file.data)
        })
}

/// Every regular file below `dir`, as paths relative to the version directory.
fn list_files(dir: &Path, prefix: &Path, out: &mut BTreeSet<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let relative = prefix.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            list_files(&entry.path(), &relative, out)?;
        } else {
            out.insert(relative.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

fn write_file(path: &Path, file: &FileContent) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut handle = create_file_with_mode(
        std::fs::OpenOptions::new().write(true).create_new(true),
        file.mode,
    )
    .open(path)?;
    handle.write_all(&file.data)?;
    // The mode given at creation is reduced by the umask; set it exactly.
    set_mode(path, file.mode)
}

/// `..<UTC date and time>.<fraction>_<pid>`: unique per write, sorted by time.
fn new_version_name() -> String {
    let now = format_utc(std::time::SystemTime::now(), "%Y_%m_%d_%H_%M_%S.%f");
    format!("..{now}_{}", std::process::id())
}

/// The first component of every payload path: the names users see in the volume.
fn top_level(payload: &Payload) -> BTreeSet<String> {
    payload
        .keys()
        .filter_map(|p| p.split('/').next())
        .map(str::to_owned)
        .collect()
}

/// Removes user-visible links no longer in the payload, and every version directory but
/// `current`.
fn remove_stale(
    dir: &Path,
    visible: &BTreeSet<String>,
    current: &str,
) -> Result<(), VolumeFileError> {
    let entries = std::fs::read_dir(dir).map_err(VolumeFileError::io(dir))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let stale = if name.starts_with("..") {
            name != DATA_LINK && name != current
        } else {
            !visible.contains(&name)
        };
        if stale {
            let removed = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            removed.map_err(VolumeFileError::io(&path))?;
        }
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(text: &str, mode: u32) -> FileContent {
        FileContent {
            data: text.as_bytes().to_vec(),
            mode,
        }
    }

    fn payload(files: &[(&str, &str, u32)]) -> Payload {
        files
            .iter()
            .map(|(path, text, mode)| ((*path).to_owned(), file(text, *mode)))
            .collect()
    }

    fn names(dir: &Path) -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn versions_are_swapped_through_the_data_link() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("vol");
        let first = payload(&[("a", "1", 0o644), ("sub/b", "2", 0o400)]);
        assert!(write_payload(&dir, &first).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "1");
        assert_eq!(std::fs::read_to_string(dir.join("sub/b")).unwrap(), "2");
        assert_eq!(
            std::fs::read_link(dir.join("a")).unwrap(),
            Path::new("..data/a")
        );
        assert_eq!(
            std::fs::read_link(dir.join("sub")).unwrap(),
            Path::new("..data/sub")
        );
        let mode = std::fs::metadata(dir.join("sub/b"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o400);
        let version = std::fs::read_link(dir.join(DATA_LINK)).unwrap();
        assert!(version.to_string_lossy().starts_with("..20"), "{version:?}");

        // The same content again: nothing is written.
        assert!(!write_payload(&dir, &first).unwrap());
        assert_eq!(std::fs::read_link(dir.join(DATA_LINK)).unwrap(), version);

        // A changed mode alone is a change.
        let chmod = payload(&[("a", "1", 0o600), ("sub/b", "2", 0o400)]);
        assert!(write_payload(&dir, &chmod).unwrap());

        // New content: `a` changes, `sub` goes, `c` comes; one version is left.
        let second = payload(&[("a", "changed", 0o644), ("c", "3", 0o644)]);
        assert!(write_payload(&dir, &second).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "changed");
        assert_eq!(std::fs::read_to_string(dir.join("c")).unwrap(), "3");
        assert!(std::fs::symlink_metadata(dir.join("sub")).is_err());
        let current = std::fs::read_link(dir.join(DATA_LINK)).unwrap();
        assert_ne!(current, version);
        let expected: BTreeSet<String> = [
            "..data".to_owned(),
            current.to_string_lossy().into_owned(),
            "a".to_owned(),
            "c".to_owned(),
        ]
        .into();
        assert_eq!(names(&dir), expected);

        // An empty payload leaves an empty volume.
        assert!(write_payload(&dir, &Payload::new()).unwrap());
        assert_eq!(names(&dir).len(), 2);
    }

    #[test]
    fn paths_that_escape_or_clash_are_refused() {
        let root = tempfile::tempdir().unwrap();
        for bad in ["../x", "/etc/x", "a/../../x", "..data", "..x/y", ""] {
            let error = write_payload(root.path(), &payload(&[(bad, "", 0o644)])).unwrap_err();
            assert!(
                matches!(&error, VolumeFileError::UnsafePath { path } if path == bad),
                "{bad}: {error}"
            );
            assert!(error.to_string().contains("relative path"), "{error}");
        }
        let error = write_payload(
            root.path(),
            &payload(&[("a", "", 0o644), ("a/b", "", 0o644)]),
        )
        .unwrap_err();
        assert!(
            matches!(&error, VolumeFileError::BelowFile { path, parent } if path == "a/b" && parent == "a"),
            "{error}"
        );
        assert_eq!(error.to_string(), "\"a/b\" is below the file \"a\"");
        assert!(names(root.path()).is_empty(), "nothing was written");
    }
}
