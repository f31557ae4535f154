//! The errno values of a resource that ran out: descriptors of the process or the system,
//! socket buffers, memory.

/// `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`.
pub(super) const EXHAUSTED: [i32; 4] = [
    nix::libc::EMFILE,
    nix::libc::ENFILE,
    nix::libc::ENOBUFS,
    nix::libc::ENOMEM,
];
