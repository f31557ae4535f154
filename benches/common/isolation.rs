//! Keeping a node agent that a benchmark starts away from everything else on this shared
//! machine, where other agents (and other people's test runs) use other containerd instances
//! but the same cgroup hierarchies, the same `/var/log/pods` and the same kernel.
//!
//! The upstream kubelet treats what it finds there as its own: it kills the processes of every
//! pod cgroup under its `<cgroupRoot>/kubepods` that it does not know (its orphaned pod cgroup
//! cleanup) and deletes the log directories of unknown pods under `podLogsDir`. With the
//! defaults (`/` and `/var/log/pods`) that reaches the pods of every other agent on the
//! machine, whatever containerd they use. It also sets six kernel tunables at start-up
//! (`vm.overcommit_memory=1`, `kernel.panic=10`, `kernel.panic_on_oops=1`, ...).
//!
//! An [`Isolation`] gives an agent a cgroup root and a pod logs directory of its own (the
//! configuration lines come from [`Isolation::kubelet_config`]) and, when dropped after the
//! agent stopped, removes the pod sandboxes (with their containers) the agent left on the
//! benchmark's containerd, restores the kernel tunables it changed and removes its cgroups.
//! Both agents of a comparison get one, so they run under the same layout, and each round of
//! either starts on a runtime that holds no sandbox of an agent before it: both agents remove
//! the sandboxes of pods they do not know, and the round after an agent that left some would
//! otherwise pay for its garbage.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::api::{
    ListPodSandboxRequest, PodSandboxState, RemovePodSandboxRequest, StopPodSandboxRequest,
};
use sergeant_runtime_adapters::cri::CriClient;

/// The kernel tunables the upstream kubelet sets when it starts (`/proc/sys/...`).
const TUNABLES: [&str; 6] = [
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
];

/// A private cgroup root and pod logs directory for one agent, and the kernel tunables as they
/// were before it started.
pub struct Isolation {
    /// The cgroup root, absolute (`/sergeant-bench-<name>`).
    cgroup_root: String,
    /// The directories of the cgroup root, one per cgroup hierarchy.
    cgroup_dirs: Vec<PathBuf>,
    pod_logs: PathBuf,
    tunables: Vec<(PathBuf, String)>,
}

impl Isolation {
    /// Creates the cgroup root `/sergeant-bench-<name>` in every cgroup hierarchy (the upstream
    /// kubelet refuses a root that does not exist in the v1 ones; runc also puts containers in
    /// the v2 one that a hybrid host mounts at `/sys/fs/cgroup/unified`) and the pod logs
    /// directory `<dir>/pod-logs`, and notes the kernel tunables.
    ///
    /// # Panics
    /// When the cgroup mounts cannot be read or a directory cannot be created.
    pub fn new(name: &str, dir: &Path) -> Self {
        let cgroup_root = format!("/sergeant-bench-{name}");
        let cgroup_dirs: Vec<PathBuf> = hierarchies()
            .into_iter()
            .map(|mount| mount.join(&cgroup_root[1..]))
            .collect();
        for dir in &cgroup_dirs {
            create_cgroup(dir);
        }
        let pod_logs = dir.join("pod-logs");
        fs::create_dir_all(&pod_logs)
            .unwrap_or_else(|e| panic!("creating {}: {e}", pod_logs.display()));
        let tunables = TUNABLES
            .iter()
            .map(|t| Path::new("/proc/sys").join(t))
            .filter_map(|path| Some((fs::read_to_string(&path).ok()?, path)))
            .map(|(value, path)| (path, value.trim().to_owned()))
            .collect();
        Self {
            cgroup_root,
            cgroup_dirs,
            pod_logs,
            tunables,
        }
    }

    /// The KubeletConfiguration lines that put the agent's pod cgroups and pod logs here,
    /// with the test machine's eviction thresholds.
    pub fn kubelet_config(&self) -> String {
        format!(
            "{}{}",
            self.layout_config(),
            super::harness::TEST_EVICTION_HARD
        )
    }

    /// The KubeletConfiguration lines that put the agent's pod cgroups and pod logs here, for
    /// a benchmark that sets the eviction thresholds itself.
    pub fn layout_config(&self) -> String {
        format!(
            "cgroupRoot: {}\npodLogsDir: {}\n",
            self.cgroup_root,
            self.pod_logs.display()
        )
    }

    /// How many processes run in the agent's pod cgroups: its containers and sandboxes. An
    /// agent can stop listing a pod before it stopped the pod's containers.
    pub fn processes(&self) -> usize {
        self.cgroup_dirs
            .first()
            .map_or(0, |dir| count_processes(dir))
    }
}

/// The processes in cgroup `dir` and below it.
fn count_processes(dir: &Path) -> usize {
    let own = fs::read_to_string(dir.join("cgroup.procs"))
        .map_or(0, |procs| procs.lines().filter(|l| !l.is_empty()).count());
    let below: usize = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .map(|entry| count_processes(&entry.path()))
        .sum();
    own + below
}

impl Drop for Isolation {
    /// Removes the pod sandboxes the agent left on the runtime, restores the kernel tunables
    /// it changed and removes the cgroup root with what the agent left below it; says what it
    /// found left and what it could not undo (a cgroup that still has processes).
    fn drop(&mut self) {
        match remove_sandboxes() {
            Ok((0, _)) => {}
            Ok((left, ready)) => println!(
                "removed {left} pod sandboxes ({ready} of them still ready) the agent left on the runtime"
            ),
            Err(e) => println!("could not remove the pod sandboxes the agent left: {e}"),
        }
        for (path, before) in &self.tunables {
            let now = fs::read_to_string(path).unwrap_or_default();
            if now.trim() != before {
                match fs::write(path, before) {
                    Ok(()) => println!(
                        "restored {} to {before} (was {})",
                        path.display(),
                        now.trim()
                    ),
                    Err(e) => println!("could not restore {} to {before}: {e}", path.display()),
                }
            }
        }
        for dir in &self.cgroup_dirs {
            if let Err(e) = remove_cgroup_tree(dir) {
                println!("left cgroup {} in place: {e}", dir.display());
            }
        }
    }
}

/// Stops and removes every pod sandbox, with its containers, on the benchmark's containerd
/// (`SERGEANT_CRI_ENDPOINT`, an instance of the benchmark's own, where no other agent runs
/// while an `Isolation` is dropped): how many there were, and how many of them were still
/// ready.
fn remove_sandboxes() -> Result<(usize, usize), String> {
    let endpoint = std::env::var("SERGEANT_CRI_ENDPOINT")
        .map_err(|_| "SERGEANT_CRI_ENDPOINT is not set".to_owned())?;
    let endpoint = Endpoint::parse(&endpoint).map_err(|e| e.to_string())?;
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    tokio.block_on(async {
        let client = CriClient::for_endpoint(endpoint).map_err(|e| e.to_string())?;
        let sandboxes = client
            .call(ListPodSandboxRequest { filter: None })
            .await
            .map_err(|e| e.to_string())?
            .items;
        let ready = sandboxes
            .iter()
            .filter(|s| s.state == PodSandboxState::SandboxReady as i32)
            .count();
        for sandbox in &sandboxes {
            client
                .call(StopPodSandboxRequest {
                    pod_sandbox_id: sandbox.id.clone(),
                })
                .await
                .map_err(|e| format!("stopping sandbox {}: {e}", sandbox.id))?;
            client
                .call(RemovePodSandboxRequest {
                    pod_sandbox_id: sandbox.id.clone(),
                })
                .await
                .map_err(|e| format!("removing sandbox {}: {e}", sandbox.id))?;
        }
        Ok((sandboxes.len(), ready))
    })
}

/// The mount points of the cgroup hierarchies: the v1 ones (`/sys/fs/cgroup/<controller>`, the
/// named `systemd` one) and a v2 one mounted beside them.
fn hierarchies() -> Vec<PathBuf> {
    let text = fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_else(|e| panic!("reading /proc/self/mountinfo: {e}"));
    text.lines()
        .filter_map(|line| {
            let (fields, fs_type) = line.split_once(" - ")?;
            let mount_point = fields.split(' ').nth(4)?;
            let fs_type = fs_type.split(' ').next()?;
            matches!(fs_type, "cgroup" | "cgroup2").then(|| PathBuf::from(mount_point))
        })
        .collect()
}

/// Creates cgroup `dir`; in the cpuset hierarchy it also gives it its parent's CPUs and memory
/// nodes, which a new cpuset cgroup lacks (nothing could run in it).
fn create_cgroup(dir: &Path) {
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => panic!("creating cgroup {}: {e}", dir.display()),
    }
    let parent = dir.parent().expect("a cgroup below the hierarchy's root");
    for file in ["cpuset.cpus", "cpuset.mems"] {
        let Ok(value) = fs::read_to_string(parent.join(file)) else {
            continue; // not the cpuset hierarchy
        };
        let own = fs::read_to_string(dir.join(file)).unwrap_or_default();
        if own.trim().is_empty() && !value.trim().is_empty() {
            fs::write(dir.join(file), value.trim())
                .unwrap_or_else(|e| panic!("writing {}/{file}: {e}", dir.display()));
        }
    }
}

/// Removes cgroup `dir` and the cgroups below it, deepest first. A cgroup directory is removed
/// with `rmdir` (its control files go with it); one that still has processes refuses (EBUSY).
fn remove_cgroup_tree(dir: &Path) -> Result<(), String> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_cgroup_tree(&entry.path())?;
        }
    }
    fs::remove_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// How many mounts stacked on one another [`unmount_all`] takes off one mount point at most.
const MAX_STACKED: usize = 8;

/// Unmounts every mount at `path` or below it, deepest first, as many times as mounts are
/// stacked there; lazily when one is busy. The upstream kubelet bind-mounts its root directory
/// onto itself (to make it shared) and mounts pods' volumes below it: mounts that outlive it
/// and keep the filesystem below them busy. Says what it could not unmount.
pub fn unmount_all(path: &Path) {
    for _ in 0..MAX_STACKED {
        let mounts = mounts_at_or_below(path);
        if mounts.is_empty() {
            return;
        }
        for mount in mounts {
            if nix::mount::umount2(mount.as_str(), nix::mount::MntFlags::empty()).is_err() {
                let _ = nix::mount::umount2(mount.as_str(), nix::mount::MntFlags::MNT_DETACH);
            }
        }
    }
    println!(
        "mounts left at or below {}: {:?}",
        path.display(),
        mounts_at_or_below(path)
    );
}

/// The mount points at `path` or below it (`/proc/self/mountinfo`), deepest first.
fn mounts_at_or_below(path: &Path) -> Vec<String> {
    let at = path.display().to_string();
    let below = format!("{at}/");
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts: Vec<String> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|mount| *mount == at || mount.starts_with(&below))
        .map(str::to_owned)
        .collect();
    mounts.sort_by_key(|mount| std::cmp::Reverse(mount.len()));
    mounts
}
