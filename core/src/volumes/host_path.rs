//! hostPath types: what must already be at the path, or what to create there (the checks and
//! creation are `sergeant_host::volumes::prepare_host_path`).

/// What a hostPath volume expects at its path (its `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPathType {
    /// `""`: no check at all.
    Unchecked,
    /// A directory, created (0755) when nothing is there.
    DirectoryOrCreate,
    /// An existing directory.
    Directory,
    /// A file, created empty (0644) when nothing is there; its directory must exist.
    FileOrCreate,
    /// An existing regular file.
    File,
    /// An existing UNIX socket.
    Socket,
    /// An existing character device.
    CharDevice,
    /// An existing block device.
    BlockDevice,
}

impl HostPathType {
    /// The type named `text` as it appears in a pod spec; `None` for an unknown name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "" => HostPathType::Unchecked,
            "DirectoryOrCreate" => HostPathType::DirectoryOrCreate,
            "Directory" => HostPathType::Directory,
            "FileOrCreate" => HostPathType::FileOrCreate,
            "File" => HostPathType::File,
            "Socket" => HostPathType::Socket,
            "CharDevice" => HostPathType::CharDevice,
            "BlockDevice" => HostPathType::BlockDevice,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(HostPathType::parse(""), Some(HostPathType::Unchecked));
        assert_eq!(
            HostPathType::parse("CharDevice"),
            Some(HostPathType::CharDevice)
        );
        assert_eq!(HostPathType::parse("directory"), None);
    }
}
