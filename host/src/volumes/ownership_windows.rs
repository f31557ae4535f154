//! `fsGroup` on Windows: files carry ACLs, not unix groups, and upstream ignores `fsGroup`
//! there; the volume plan holds no ownership on a Windows node, so this is never asked.

use std::path::Path;

use sergeant_core::volumes::VolumeOwnership;

use super::error::VolumeFileError;

/// The group bits API-backed files get on top of their mode (none here: see above).
pub(crate) const GROUP_READ: u32 = 0;

/// Does nothing: see the module header.
///
/// # Errors
///
/// Never.
pub(crate) fn apply(
    _dir: &Path,
    _ownership: VolumeOwnership,
    _read_only: bool,
    _recursive: bool,
) -> Result<(), VolumeFileError> {
    Ok(())
}
