//! The disk scenario's root filesystem: an ext4 in an image file on a loop device, a
//! block-device filesystem like a real node's (cAdvisor, where the upstream kubelet learns
//! nodefs, lists it as a partition; it lists no tmpfs).

use std::fs;
use std::path::Path;
use std::process::Command;

use nix::mount::{mount, MsFlags};

/// An ext4 filesystem in an image file on a loop device, mounted on a directory of its own;
/// when dropped, unmounted with whatever an agent left mounted on it, detached and removed.
pub struct LoopFs {
    dir: tempfile::TempDir,
    device: String,
    _image: tempfile::TempDir,
}

/// Runs `program` with `args`; its standard output, or why it failed.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl LoopFs {
    /// Makes an ext4 of `bytes` (no blocks reserved for root) and mounts it.
    pub fn mount(bytes: u64) -> Result<Self, String> {
        let image_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = image_dir.path().join("nodefs.img");
        fs::File::create(&image)
            .and_then(|f| f.set_len(bytes))
            .map_err(|e| format!("{}: {e}", image.display()))?;
        let image = image.to_string_lossy().into_owned();
        run("mkfs.ext4", &["-q", "-F", "-m", "0", &image])?;
        let device = run("losetup", &["--find", "--show", &image])?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let fs = Self {
            dir,
            device,
            _image: image_dir,
        };
        mount(
            Some(fs.device.as_str()),
            fs.path(),
            Some("ext4"),
            MsFlags::empty(),
            None::<&str>,
        )
        .map_err(|e| format!("mounting {} (needs root): {e}", fs.device))?;
        Ok(fs)
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LoopFs {
    /// Unmounts the filesystem with what an agent left mounted on it or below it, and detaches
    /// the loop device (once the filesystem is released, when a mount had to go lazily).
    fn drop(&mut self) {
        crate::isolation::unmount_all(self.path());
        if let Err(e) = run("losetup", &["--detach", &self.device]) {
            println!("{e}");
        }
    }
}
