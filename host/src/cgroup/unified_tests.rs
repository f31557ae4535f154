//! The cgroup v2 path on a fake cgroupfs tree (these machines are cgroup v1): a directory with
//! `cgroup.controllers` stands for the unified mount, and the files the kernel would hold are
//! plain files the tests write and read (a cgroup's memory and CPU time are read from a fake
//! v1 tree too).

use std::path::Path;

use sergeant_core::spec::{NodeCgroup, PodCgroupResources};

use super::files::Setting;
use super::fs::Cgroupfs;
use super::{apply_node_cgroup, read_resources};

fn fake_unified(controllers: &str) -> (tempfile::TempDir, Cgroupfs) {
    let root = tempfile::tempdir().expect("tempdir");
    std::fs::write(root.path().join("cgroup.controllers"), controllers).expect("controllers");
    let cgroups = Cgroupfs::unified(root.path());
    (root, cgroups)
}

fn read(root: &Path, relative: &str) -> String {
    std::fs::read_to_string(root.join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
        .trim()
        .to_owned()
}

#[test]
fn a_pod_cgroup_is_made_with_its_controllers_enabled_on_the_way_down() {
    let (root, cgroups) = fake_unified("cpuset cpu io memory pids\n");
    cgroups.ensure("/kubepods/burstable/pod1").expect("ensure");
    assert!(root.path().join("kubepods/burstable/pod1").is_dir());
    for parent in ["", "kubepods", "kubepods/burstable"] {
        assert_eq!(
            read(&root.path().join(parent), "cgroup.subtree_control"),
            "+cpu +memory +pids",
            "{parent:?}"
        );
    }
    assert!(
        !root
            .path()
            .join("kubepods/burstable/pod1/cgroup.subtree_control")
            .exists(),
        "the pod's own children are the runtime's to enable"
    );
}

#[test]
fn pod_limits_go_to_the_v2_files_and_read_back() {
    let (root, cgroups) = fake_unified("cpu memory pids");
    let path = "/kubepods/pod2";
    cgroups.ensure(path).expect("ensure");
    let limits = PodCgroupResources {
        cpu_shares: 1024,
        cpu_quota_us: Some(150_000),
        memory_limit_bytes: Some(64 << 20),
    };
    cgroups
        .set(
            path,
            &[
                Setting::CpuShares(limits.cpu_shares),
                Setting::CpuQuota(limits.cpu_quota_us),
                Setting::MemoryLimit(limits.memory_limit_bytes),
            ],
        )
        .expect("set");
    assert_eq!(read(root.path(), "kubepods/pod2/cpu.weight"), "39");
    assert_eq!(read(root.path(), "kubepods/pod2/cpu.max"), "150000 100000");
    assert_eq!(
        read(root.path(), "kubepods/pod2/memory.max"),
        (64 << 20).to_string()
    );
    let back = read_resources(&cgroups, path)
        .expect("read")
        .expect("there");
    assert_eq!(back.cpu_quota_us, limits.cpu_quota_us);
    assert_eq!(back.memory_limit_bytes, limits.memory_limit_bytes);
    assert!((back.cpu_shares - 1024).abs() <= 27, "{}", back.cpu_shares);
    // The kernel's interface files go with the cgroup; the fake tree's are plain files.
    for file in ["cpu.weight", "cpu.max", "memory.max"] {
        std::fs::remove_file(root.path().join("kubepods/pod2").join(file)).expect(file);
    }
    cgroups.remove(path).expect("remove");
    assert_eq!(read_resources(&cgroups, path).expect("read"), None);
}

#[test]
fn node_cgroups_get_weight_memory_and_pids_or_max() {
    let (root, cgroups) = fake_unified("cpu memory pids");
    apply_node_cgroup(
        &cgroups,
        &NodeCgroup {
            path: "/kubepods".into(),
            cpu_shares: 2048,
            memory_limit_bytes: Some(7 << 30),
            pids_max: Some(31_000),
        },
    )
    .expect("kubepods");
    apply_node_cgroup(
        &cgroups,
        &NodeCgroup {
            path: "/kubepods/besteffort".into(),
            cpu_shares: 2,
            memory_limit_bytes: None,
            pids_max: None,
        },
    )
    .expect("besteffort");
    assert_eq!(read(root.path(), "kubepods/cpu.weight"), "79");
    assert_eq!(
        read(root.path(), "kubepods/memory.max"),
        (7_i64 << 30).to_string()
    );
    assert_eq!(read(root.path(), "kubepods/pids.max"), "31000");
    assert_eq!(read(root.path(), "kubepods/besteffort/cpu.weight"), "1");
    assert_eq!(read(root.path(), "kubepods/besteffort/memory.max"), "max");
    assert_eq!(read(root.path(), "kubepods/besteffort/pids.max"), "max");
}

#[test]
fn a_controller_less_unified_mount_is_left_to_the_runtime() {
    let (root, cgroups) = fake_unified("");
    cgroups.ensure("/kubepods/pod3").expect("ensure");
    cgroups
        .set("/kubepods/pod3", &[Setting::CpuShares(2)])
        .expect("nothing to write");
    assert!(!root.path().join("kubepods").exists());
    assert!(!root.path().join("cgroup.subtree_control").exists());
}

#[test]
fn a_missing_controller_writes_nothing_for_it() {
    let (root, cgroups) = fake_unified("cpu pids");
    cgroups.ensure("/kubepods").expect("ensure");
    assert_eq!(read(root.path(), "cgroup.subtree_control"), "+cpu +pids");
    cgroups
        .set(
            "/kubepods",
            &[
                Setting::MemoryLimit(Some(1 << 20)),
                Setting::PidsMax(Some(9)),
            ],
        )
        .expect("set");
    assert!(!root.path().join("kubepods/memory.max").exists());
    assert_eq!(read(root.path(), "kubepods/pids.max"), "9");
}

#[test]
fn a_cgroups_memory_is_its_limit_and_its_usage_less_inactive_files_on_either_version() {
    let (root, unified) = fake_unified("cpu memory pids");
    let dir = root.path().join("kubepods");
    std::fs::create_dir_all(&dir).expect("cgroup");
    std::fs::write(dir.join("memory.max"), "1073741824\n").expect("max");
    std::fs::write(dir.join("memory.current"), "314572800\n").expect("current");
    std::fs::write(dir.join("memory.stat"), "anon 1\ninactive_file 104857600\n").expect("stat");
    let memory = unified.memory("/kubepods").expect("read").expect("there");
    assert_eq!(memory.limit_bytes, Some(1 << 30));
    assert_eq!(memory.working_set_bytes, 200 << 20);
    std::fs::write(dir.join("memory.max"), "max\n").expect("max");
    assert_eq!(
        unified.memory("/kubepods").unwrap().unwrap().limit_bytes,
        None
    );
    assert_eq!(unified.memory("/missing").unwrap(), None);
    std::fs::write(dir.join("memory.stat"), "anon 1\n").expect("stat");
    let broken = unified.memory("/kubepods").unwrap_err().to_string();
    assert!(
        broken.contains("memory.stat") && broken.contains("inactive_file"),
        "{broken}"
    );

    let v1_root = tempfile::tempdir().expect("tempdir");
    let v1 = Cgroupfs::from_mounts(&[crate::mountinfo::MountEntry {
        mount_point: v1_root.path().to_path_buf(),
        fs_type: "cgroup".to_owned(),
        super_options: "rw,memory".to_owned(),
    }]);
    let dir = v1_root.path().join("kubepods");
    std::fs::create_dir_all(&dir).expect("cgroup");
    std::fs::write(dir.join("memory.limit_in_bytes"), "9223372036854771712\n").expect("limit");
    std::fs::write(dir.join("memory.usage_in_bytes"), "3000\n").expect("usage");
    std::fs::write(
        dir.join("memory.stat"),
        "inactive_file 1\ntotal_inactive_file 1000\n",
    )
    .expect("stat");
    let memory = v1.memory("/kubepods").expect("read").expect("there");
    assert_eq!(memory.limit_bytes, None, "the kernel's unlimited");
    assert_eq!(memory.usage_bytes, 3000);
    assert_eq!(memory.working_set_bytes, 2000);
}

#[test]
fn a_cgroups_cpu_time_is_read_in_nanoseconds_on_either_version() {
    let (root, unified) = fake_unified("cpu memory pids");
    let dir = root.path().join("kubepods");
    std::fs::create_dir_all(&dir).expect("cgroup");
    std::fs::write(
        dir.join("cpu.stat"),
        "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n",
    )
    .expect("stat");
    let cpu = unified.cpu("/kubepods").expect("read").expect("there");
    assert_eq!(cpu.usage_ns, 2_500_000);
    assert!(cpu.since.is_some());
    assert_eq!(unified.cpu("/missing").unwrap(), None);
    std::fs::write(dir.join("cpu.stat"), "user_usec 2000\n").expect("stat");
    let broken = unified.cpu("/kubepods").unwrap_err().to_string();
    assert!(
        broken.contains("cpu.stat") && broken.contains("usage_usec"),
        "{broken}"
    );

    let v1_root = tempfile::tempdir().expect("tempdir");
    let v1 = Cgroupfs::from_mounts(&[crate::mountinfo::MountEntry {
        mount_point: v1_root.path().to_path_buf(),
        fs_type: "cgroup".to_owned(),
        super_options: "rw,cpu,cpuacct".to_owned(),
    }]);
    let dir = v1_root.path().join("kubepods");
    std::fs::create_dir_all(&dir).expect("cgroup");
    std::fs::write(dir.join("cpuacct.usage"), "123456789\n").expect("usage");
    assert_eq!(v1.cpu("/kubepods").unwrap().unwrap().usage_ns, 123_456_789);
    std::fs::write(dir.join("cpuacct.usage"), "lots\n").expect("usage");
    assert!(v1.cpu("/kubepods").is_err());
}
