//! Reading `staticPodPath`: a directory of manifests (or a single manifest file). Each scan
//! lists the directory, skips hidden files and subdirectories, and re-reads only the files
//! whose (mtime, size, inode) changed since the last scan — or that changed so recently that
//! a second write within the file system's clock tick could hide behind the same stamp. All of
//! it blocks, so the static pod source actor (`sergeant_actors::sources`) runs each scan on the
//! blocking pool, never on an actor thread. No file is read past the manifest size cap, and
//! each costs time linear in its size, so a hostile file delays the others by no more than a
//! large good one would. Each pod is annotated with the time it was first read
//! (`kubernetes.io/config.seen`), kept while its manifest holds it.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use k8s_openapi::api::core::v1::Pod;

use sergeant_core::limits::MAX_MANIFEST_BYTES;
use sergeant_core::located::Rejection;
use sergeant_core::manifest::load_static_pod;
use sergeant_core::source::FirstSeen;

/// A file modified less than this before it was read is read again on the next scan, since
/// a later write may have kept its stamp.
const SETTLE: Duration = Duration::from_secs(2);

/// `staticPodPath` could not be listed; the last good view stays in force.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: cannot read: {reason}")]
pub struct ScanError {
    /// The path that could not be read.
    pub path: String,
    /// The operating system's reason.
    pub reason: String,
}

/// Why one manifest file gives no pod: it could not be read, or the loader rejected it. Kept
/// for the file between scans, and reported as the file's rejection ([`Scan::rejected`]),
/// whose error is this one's Display.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    /// The file is listed but could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not define a pod this node can run (each problem with its line).
    #[error(transparent)]
    Rejected(#[from] Rejection),
}

/// The file's bytes, but no more than one past the size cap: enough for the loader to refuse
/// a file that is too large without holding all of it (it may also grow while being read).
fn read_capped(file: &Path) -> std::io::Result<Vec<u8>> {
    let mut content = Vec::new();
    std::fs::File::open(file)?
        .take(MAX_MANIFEST_BYTES.saturating_add(1))
        .read_to_end(&mut content)?;
    Ok(content)
}

/// What one scan found, in file name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// The pods the manifests define.
    pub pods: Vec<Arc<Pod>>,
    /// The files that define no pod: each file (as shown) and why, naming its line and field.
    pub rejected: Vec<(String, String)>,
    /// `staticPodPath` does not exist (yet): no pods, and not an error.
    pub missing: bool,
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    identity: (u64, u64),
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Self {
        Self {
            modified: metadata.modified().ok(),
            len: metadata.len(),
            identity: crate::filesystem::identity_of(metadata),
        }
    }
}

/// A pod loaded from a file, with the line its name is on (for duplicate reports).
#[derive(Debug, Clone)]
struct Loaded {
    pod: Arc<Pod>,
    name_line: usize,
}

/// One file of a listing: its name (the listing's order, and the key of what was read of it),
/// its path and its stamp.
struct Listed {
    name: OsString,
    path: PathBuf,
    stamp: Stamp,
}

/// The last reading of one file.
#[derive(Debug)]
struct Known {
    /// The file as shown in a rejection.
    origin: String,
    stamp: Stamp,
    read_at: SystemTime,
    outcome: Result<Loaded, LoadError>,
}

impl Known {
    /// Whether the file, now stamped `stamp`, can be trusted to hold what was read.
    fn still_valid(&self, stamp: &Stamp) -> bool {
        let settled = stamp
            .modified
            .and_then(|modified| modified.checked_add(SETTLE))
            .is_some_and(|settled| settled <= self.read_at);
        self.stamp == *stamp && settled
    }
}

/// Scans one `staticPodPath` for one node, remembering what it read between scans. A scan
/// that finds every file as it was read costs the listing and nothing else: no file is read,
/// and the last view is handed out again (the same pods, so its consumers see nothing new).
#[derive(Debug)]
pub struct Scanner {
    path: PathBuf,
    node: String,
    /// The last reading of each file, by file name: every file is in `path`, or is `path`.
    known: BTreeMap<OsString, Known>,
    /// When each pod of the files read was first read.
    seen: FirstSeen,
    /// The view collected from `known`, until a file is read again or goes.
    view: Option<Scan>,
}

impl Scanner {
    /// A scanner of `path` (a directory or one file) for the node `node`, which has read
    /// nothing yet.
    #[must_use]
    pub fn new(path: PathBuf, node: String) -> Self {
        Self {
            path,
            node,
            known: BTreeMap::new(),
            seen: FirstSeen::default(),
            view: None,
        }
    }

    /// Lists the manifests and loads the new and changed ones. Blocks.
    ///
    /// # Errors
    /// [`ScanError`] when `staticPodPath` exists but cannot be listed.
    pub fn scan(&mut self) -> Result<Scan, ScanError> {
        let files = match self.list() {
            Ok(files) => files,
            Err(err) if err.kind() == ErrorKind::NotFound => {
                self.known.clear();
                self.seen = FirstSeen::default();
                self.view = None;
                return Ok(Scan {
                    missing: true,
                    ..Scan::default()
                });
            }
            Err(err) => {
                return Err(ScanError {
                    path: self.path.display().to_string(),
                    reason: err.to_string(),
                })
            }
        };
        let before = self.known.len();
        self.known.retain(|name, _| {
            files
                .binary_search_by(|file| file.name.as_os_str().cmp(name))
                .is_ok()
        });
        let mut changed = self.known.len() != before;
        for file in files {
            if self
                .known
                .get(&file.name)
                .is_some_and(|known| known.still_valid(&file.stamp))
            {
                continue;
            }
            changed = true;
            let read_at = SystemTime::now();
            let outcome = match read_capped(&file.path) {
                Ok(content) => self.load(&file.path, &content, read_at),
                // Removed between listing and reading: gone, like the next scan will say.
                Err(err) if err.kind() == ErrorKind::NotFound => {
                    self.known.remove(&file.name);
                    continue;
                }
                Err(source) => Err(LoadError::Unreadable {
                    path: file.path.clone(),
                    source,
                }),
            };
            let known = Known {
                origin: file.path.display().to_string(),
                stamp: file.stamp,
                read_at,
                outcome,
            };
            self.known.insert(file.name, known);
        }
        if changed || self.view.is_none() {
            let loaded = self
                .known
                .values()
                .filter_map(|known| known.outcome.as_ref().ok());
            self.seen
                .keep_only(loaded.filter_map(|loaded| loaded.pod.metadata.uid.as_deref()));
            self.view = Some(self.collect());
        }
        Ok(self.view.clone().unwrap_or_default())
    }

    /// The regular, non-hidden files to read, sorted by name, with their stamps.
    fn list(&self) -> std::io::Result<Vec<Listed>> {
        let metadata = std::fs::metadata(&self.path)?;
        if metadata.is_file() {
            let name = self
                .path
                .file_name()
                .map_or_else(|| self.path.clone().into_os_string(), OsString::from);
            return Ok(vec![Listed {
                name,
                path: self.path.clone(),
                stamp: Stamp::of(&metadata),
            }]);
        }
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            let entry = entry?;
            let name = entry.file_name();
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = entry.path();
            // Follows symlinks; an entry that vanished or dangles is simply not there.
            match std::fs::metadata(&path) {
                Ok(metadata) if metadata.is_file() => files.push(Listed {
                    name,
                    path,
                    stamp: Stamp::of(&metadata),
                }),
                _ => {}
            }
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }

    /// The pod `content` (read from `file` at `read_at`) defines, marked with when it was
    /// first read.
    fn load(
        &mut self,
        file: &Path,
        content: &[u8],
        read_at: SystemTime,
    ) -> Result<Loaded, LoadError> {
        let shown = file.display().to_string();
        let (mut pod, name_line) = load_static_pod(&shown, content, &self.node)?;
        self.seen.mark(&mut pod, read_at);
        Ok(Loaded {
            pod: Arc::new(pod),
            name_line,
        })
    }

    /// The view of the files as now known: each pod once, the later of two files defining
    /// the same pod rejected in favour of the earlier.
    fn collect(&self) -> Scan {
        let mut scan = Scan::default();
        let mut owners: HashMap<(String, String), &str> = HashMap::new();
        for known in self.known.values() {
            let origin = &known.origin;
            match &known.outcome {
                Err(error) => scan.rejected.push((origin.clone(), error.to_string())),
                Ok(loaded) => {
                    let meta = &loaded.pod.metadata;
                    let key = (
                        meta.namespace.clone().unwrap_or_default(),
                        meta.name.clone().unwrap_or_default(),
                    );
                    if let Some(first) = owners.get(&key) {
                        let error = format!(
                            "{origin}:{}: metadata.name: pod {}/{} is already defined by {}",
                            loaded.name_line, key.0, key.1, first
                        );
                        scan.rejected.push((origin.clone(), error));
                    } else {
                        owners.insert(key, origin);
                        scan.pods.push(loaded.pod.clone());
                    }
                }
            }
        }
        scan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, image: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    image: {image}\n"
        )
    }

    /// A directory holding one manifest, `a.yaml` (its path), and a scanner of it; the
    /// directory goes when the first value is dropped.
    fn one_manifest() -> (tempfile::TempDir, PathBuf, Scanner) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, manifest("a", "busybox")).unwrap();
        let scanner = Scanner::new(dir.path().to_path_buf(), "n1".into());
        (dir, file, scanner)
    }

    fn names(scan: &Scan) -> Vec<String> {
        scan.pods
            .iter()
            .filter_map(|pod| pod.metadata.name.clone())
            .collect()
    }

    #[test]
    fn reads_good_files_skips_hidden_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), manifest("a", "busybox")).unwrap();
        std::fs::write(dir.path().join(".b.yaml"), manifest("b", "busybox")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/c.yaml"), manifest("c", "busybox")).unwrap();
        let mut scanner = Scanner::new(dir.path().to_path_buf(), "n1".into());
        let scan = scanner.scan().unwrap();
        assert_eq!(names(&scan), ["a-n1"]);
        assert!(scan.rejected.is_empty());
        assert!(!scan.missing);
    }

    #[test]
    fn a_pod_read_again_keeps_the_time_it_was_first_read_until_its_file_goes() {
        let (_dir, file, mut scanner) = one_manifest();
        let seen = |scan: &Scan| {
            let annotations = scan.pods[0].metadata.annotations.as_ref().unwrap();
            annotations["kubernetes.io/config.seen"].clone()
        };
        let first = scanner.scan().unwrap();
        let time = seen(&first);
        assert_eq!(time.len(), "2027-01-01T00:00:00.000000000Z".len(), "{time}");
        assert!(time.ends_with('Z'), "{time}");
        // Just written, so read again: a new object with the same first-seen time.
        let again = scanner.scan().unwrap();
        assert!(
            !Arc::ptr_eq(&first.pods[0], &again.pods[0]),
            "not read again"
        );
        assert_eq!(seen(&again), time);
        std::fs::remove_file(&file).unwrap();
        assert!(scanner.scan().unwrap().pods.is_empty());
        std::fs::write(&file, manifest("a", "busybox")).unwrap();
        assert_ne!(
            seen(&scanner.scan().unwrap()),
            time,
            "back after it went: seen anew"
        );
    }

    #[test]
    fn a_single_file_path_is_one_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("only.yaml");
        std::fs::write(&file, manifest("only", "busybox")).unwrap();
        let scan = Scanner::new(file, "n1".into()).scan().unwrap();
        assert_eq!(names(&scan), ["only-n1"]);
    }

    #[test]
    fn a_missing_directory_is_no_pods() {
        let dir = tempfile::tempdir().unwrap();
        let scan = Scanner::new(dir.path().join("nope"), "n1".into())
            .scan()
            .unwrap();
        assert!(scan.missing && scan.pods.is_empty());
    }

    #[test]
    fn the_later_duplicate_is_rejected_naming_the_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("1.yaml"), manifest("web", "busybox")).unwrap();
        std::fs::write(dir.path().join("2.yaml"), manifest("web", "nginx")).unwrap();
        let scan = Scanner::new(dir.path().to_path_buf(), "n1".into())
            .scan()
            .unwrap();
        assert_eq!(names(&scan), ["web-n1"]);
        let second = dir.path().join("2.yaml").display().to_string();
        let first = dir.path().join("1.yaml").display().to_string();
        assert_eq!(scan.rejected.len(), 1);
        let (origin, error) = &scan.rejected[0];
        assert_eq!(origin, &second);
        assert_eq!(
            error,
            &format!("{second}:4: metadata.name: pod default/web-n1 is already defined by {first}")
        );
    }

    /// A 400 KB file of nested lists once held the scan (and with it every other manifest)
    /// for minutes; an oversized file was read whole. Both are now refused at once, each with
    /// its reason, while the good files beside them load.
    #[test]
    fn hostile_files_are_refused_promptly_beside_good_ones() {
        let dir = tempfile::tempdir().unwrap();
        let depth = 200_000;
        let deep = format!("spec: {}{}\n", "[".repeat(depth), "]".repeat(depth));
        std::fs::write(dir.path().join("deep.yaml"), deep).unwrap();
        let big = vec![b'#'; usize::try_from(MAX_MANIFEST_BYTES).unwrap() * 4];
        std::fs::write(dir.path().join("big.yaml"), big).unwrap();
        std::fs::write(dir.path().join("good.yaml"), manifest("good", "busybox")).unwrap();
        let started = std::time::Instant::now();
        let scan = Scanner::new(dir.path().to_path_buf(), "n1".into())
            .scan()
            .unwrap();
        let took = started.elapsed();
        eprintln!("scanned the hostile directory in {took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert_eq!(names(&scan), ["good-n1"]);
        let errors: Vec<&str> = scan.rejected.iter().map(|(_, e)| e.as_str()).collect();
        let shown = |name: &str| dir.path().join(name).display().to_string();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with(&format!("{}:1: the file is larger than", shown("big.yaml"))),
            "{errors:?}"
        );
        assert_eq!(
            errors[1],
            format!(
                "{}:1: nested more than 64 levels deep: no pod is this deep",
                shown("deep.yaml")
            )
        );
    }

    #[test]
    fn a_settled_directory_gives_the_same_view_until_a_file_goes() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c"] {
            let file = dir.path().join(format!("{name}.yaml"));
            std::fs::write(file, manifest(name, "busybox")).unwrap();
        }
        let mut scanner = Scanner::new(dir.path().to_path_buf(), "n1".into());
        let first = scanner.scan().unwrap();
        let long_ago = SystemTime::now() + SETTLE;
        for known in scanner.known.values_mut() {
            known.read_at = long_ago;
        }
        let again = scanner.scan().unwrap();
        assert_eq!(again, first);
        assert!(first
            .pods
            .iter()
            .zip(&again.pods)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        std::fs::remove_file(dir.path().join("b.yaml")).unwrap();
        let after = scanner.scan().unwrap();
        assert_eq!(names(&after), ["a-n1", "c-n1"]);
        assert!(
            Arc::ptr_eq(&after.pods[0], &first.pods[0]),
            "a is not read again"
        );
    }

    #[test]
    fn unchanged_settled_files_are_not_read_again() {
        let (_dir, file, mut scanner) = one_manifest();
        scanner.scan().unwrap();
        // Pretend it was read long after it was written, then break the file behind the
        // scanner's back while keeping its stamp: a settled, unchanged stamp is trusted.
        let long_ago = SystemTime::now() + SETTLE;
        for known in scanner.known.values_mut() {
            known.read_at = long_ago;
        }
        let before = std::fs::metadata(&file).unwrap();
        std::fs::write(&file, manifest("b", "busybox")).unwrap();
        let file_handle = std::fs::File::options().write(true).open(&file).unwrap();
        file_handle
            .set_modified(before.modified().unwrap())
            .unwrap();
        assert_eq!(names(&scanner.scan().unwrap()), ["a-n1"]);
    }
}
