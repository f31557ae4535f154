//! Whether this host's kernel enforces AppArmor, read as the runtime reads it: the security
//! filesystem has an `apparmor` directory and the module says it is enabled. Entry point:
//! [`apparmor_enabled`].

use std::path::Path;

/// Where the kernel's AppArmor interface appears when the module is loaded.
const SECURITYFS_DIR: &str = "/sys/kernel/security/apparmor";
/// `Y` when the loaded module enforces profiles.
const MODULE_ENABLED: &str = "/sys/module/apparmor/parameters/enabled";

/// Whether AppArmor profiles can be enforced on this host; false wherever the files are
/// missing or unreadable (a kernel without the module, a Windows node). Blocking I/O.
#[must_use]
pub fn apparmor_enabled() -> bool {
    enabled_in(Path::new(SECURITYFS_DIR), Path::new(MODULE_ENABLED))
}

fn enabled_in(securityfs_dir: &Path, module_enabled: &Path) -> bool {
    securityfs_dir.is_dir()
        && std::fs::read(module_enabled).is_ok_and(|flag| flag.first() == Some(&b'Y'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enabled_only_with_the_interface_and_a_y() {
        let dir = tempfile::tempdir().expect("tempdir");
        let securityfs = dir.path().join("apparmor");
        let flag = dir.path().join("enabled");
        assert!(!enabled_in(&securityfs, &flag), "neither exists");
        std::fs::create_dir(&securityfs).expect("dir");
        assert!(!enabled_in(&securityfs, &flag), "no module flag");
        std::fs::write(&flag, "N\n").expect("write");
        assert!(!enabled_in(&securityfs, &flag), "module says no");
        std::fs::write(&flag, "Y\n").expect("write");
        assert!(enabled_in(&securityfs, &flag));
        std::fs::remove_dir(&securityfs).expect("rmdir");
        assert!(!enabled_in(&securityfs, &flag), "no securityfs entry");
    }
}
