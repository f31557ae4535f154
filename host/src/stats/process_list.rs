//! Windows' process list as `NtQuerySystemInformation(SystemProcessInformation)` writes it: a
//! chain of `SYSTEM_PROCESS_INFORMATION` records in one buffer, each starting with the offset
//! of the next (0 on the last) and holding, 8 bytes in, the process's private working set
//! (`WorkingSetPrivateSize`, the memory only that process uses). Their sum is what upstream's
//! Windows kubelet reads as the node's working set from the performance counter
//! `\Process(_Total)\Working Set - Private`. Pure, so it is tested on every platform; the
//! Windows node reader (`node_windows.rs`) makes the call.
//!
//! Entry point: [`private_working_set`].

/// Where in a record the offset of the next record is (a `u32`).
const NEXT_OFFSET_AT: usize = 0;
/// Where in a record the private working set is (a little-endian `i64`, in bytes).
const PRIVATE_WORKING_SET_AT: usize = 8;

/// Why a process list is not what the call writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessListError {
    /// A record, or its private working set, runs past the end of what was written.
    #[error("the process record at byte {offset} runs past the {len} bytes written")]
    Truncated {
        /// Where the record starts.
        offset: usize,
        /// How many bytes were written.
        len: usize,
    },
    /// A record's private working set is negative.
    #[error("the process record at byte {offset} has a negative private working set")]
    Negative {
        /// Where the record starts.
        offset: usize,
    },
}

/// The sum of the private working sets of the processes in `list`, the bytes the call wrote.
/// An empty list sums to 0.
///
/// # Errors
/// [`ProcessListError`] when a record runs past the end, or its number is negative.
pub fn private_working_set(list: &[u8]) -> Result<u64, ProcessListError> {
    if list.is_empty() {
        return Ok(0);
    }
    let mut offset = 0usize;
    let mut total = 0u64;
    loop {
        let truncated = ProcessListError::Truncated {
            offset,
            len: list.len(),
        };
        let next = read::<4>(list, offset, NEXT_OFFSET_AT).ok_or_else(|| truncated.clone())?;
        let private = read::<8>(list, offset, PRIVATE_WORKING_SET_AT).ok_or(truncated)?;
        let private = u64::try_from(i64::from_le_bytes(private))
            .map_err(|_| ProcessListError::Negative { offset })?;
        total = total.saturating_add(private);
        let next = usize::try_from(u32::from_le_bytes(next)).unwrap_or(usize::MAX);
        if next == 0 {
            return Ok(total);
        }
        offset = offset
            .checked_add(next)
            .ok_or(ProcessListError::Truncated {
                offset: usize::MAX,
                len: list.len(),
            })?;
    }
}

/// The `N` bytes at `field` of the record at `record` in `list`; `None` past its end.
fn read<const N: usize>(list: &[u8], record: usize, field: usize) -> Option<[u8; N]> {
    let start = record.checked_add(field)?;
    let end = start.checked_add(N)?;
    list.get(start..end)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `size` bytes whose next record is `next` bytes on and whose private
    /// working set is `private`.
    fn record(size: usize, next: u32, private: i64) -> Vec<u8> {
        let mut bytes = vec![0xAB; size];
        bytes[..4].copy_from_slice(&next.to_le_bytes());
        bytes[8..16].copy_from_slice(&private.to_le_bytes());
        bytes
    }

    #[test]
    fn the_private_working_sets_of_the_chain_are_summed() {
        let mut list = record(256, 256, 4096);
        list.extend(record(300, 300, 8192));
        list.extend(record(64, 0, 1));
        assert_eq!(private_working_set(&list), Ok(4096 + 8192 + 1));
        assert_eq!(private_working_set(&record(16, 0, 7)), Ok(7));
        assert_eq!(private_working_set(&[]), Ok(0));
    }

    #[test]
    fn a_record_past_the_end_or_a_negative_size_is_refused() {
        let mut list = record(256, 256, 4096);
        list.extend(record(16, 0, 0)[..12].to_vec());
        assert_eq!(
            private_working_set(&list),
            Err(ProcessListError::Truncated {
                offset: 256,
                len: 268
            })
        );
        assert_eq!(
            private_working_set(&record(64, 4096, 1)),
            Err(ProcessListError::Truncated {
                offset: 4096,
                len: 64
            })
        );
        assert_eq!(
            private_working_set(&record(64, 0, -1)),
            Err(ProcessListError::Negative { offset: 0 })
        );
    }
}
