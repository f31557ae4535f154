//! Small state files that must outlive the process (the pod manager's allocation
//! checkpoint): read whole, and written so that a crash leaves the old file or the new one,
//! never half of either (a temporary file beside it, synced, then renamed over it).

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The file at `path`; `None` when there is none yet.
///
/// # Errors
/// It exists but cannot be read.
pub fn read(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Replaces the file at `path` with `bytes` in one step.
///
/// # Errors
/// The temporary file cannot be written or synced, or not renamed over `path`.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = Path::new(&temporary);
    let mut file = fs::File::create(temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_reads_back_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("state.json");
        assert_eq!(read(&path).expect("no error"), None);
        write(&path, b"one").expect("written");
        write(&path, b"two").expect("replaced");
        assert_eq!(read(&path).expect("read").as_deref(), Some(&b"two"[..]));
        let left: Vec<_> = fs::read_dir(dir.path()).expect("listed").collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }
}
