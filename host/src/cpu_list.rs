//! Linux's list format for sets of CPUs, as `/sys/devices/system/cpu/online` writes it: ranges
//! and single CPU numbers in ascending order, separated by commas (`0-3,6,8-11`). Pure: the
//! caller reads the file.
//!
//! Entry point: [`count`].

/// The longest list read, in bytes: the kernel writes such a file within one page, so anything
/// longer is not one.
pub const MAX_LEN: usize = 4096;

/// Why a text is not a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// Nothing but white space: a machine has at least one CPU online.
    #[error("no CPU listed")]
    Empty,
    /// Longer than the kernel writes.
    #[error("longer than {MAX_LEN} bytes")]
    TooLong,
    /// An entry that is neither a CPU number nor a range of two.
    #[error("{entry:?} is not a CPU number or a range `first-last`")]
    NotANumber {
        /// The entry, between commas.
        entry: String,
    },
    /// A range whose last CPU comes before its first.
    #[error("{entry:?} ends before it starts")]
    Backwards {
        /// The entry, between commas.
        entry: String,
    },
    /// The CPUs up to this entry are more than a 32-bit count holds.
    #[error("{entry:?} makes more CPUs than can be counted")]
    TooMany {
        /// The entry, between commas.
        entry: String,
    },
    /// An entry that does not come after the one before it: the kernel lists CPUs once each,
    /// in ascending order.
    #[error("{entry:?} does not come after the CPUs before it")]
    OutOfOrder {
        /// The entry, between commas.
        entry: String,
    },
}

/// How many CPUs the list `text` names (the trailing newline of the file allowed).
///
/// # Errors
/// [`CpuListError`] when `text` is empty, longer than [`MAX_LEN`], or holds an entry that is
/// not a number or range, runs backwards, or overlaps or precedes the entry before it, or the
/// CPUs are more than a `u32` counts.
pub fn count(text: &str) -> Result<u32, CpuListError> {
    if text.len() > MAX_LEN {
        return Err(CpuListError::TooLong);
    }
    let text = text.trim_end_matches('\n');
    if text.trim().is_empty() {
        return Err(CpuListError::Empty);
    }
    let mut total: u32 = 0;
    let mut previous: Option<u32> = None;
    for entry in text.split(',') {
        let (first, last) = range(entry)?;
        if previous.is_some_and(|previous| first <= previous) {
            return Err(CpuListError::OutOfOrder {
                entry: entry.to_owned(),
            });
        }
        total = (last - first)
            .checked_add(1)
            .and_then(|span| total.checked_add(span))
            .ok_or_else(|| CpuListError::TooMany {
                entry: entry.to_owned(),
            })?;
        previous = Some(last);
    }
    Ok(total)
}

/// The first and last CPU of one entry: `N` or `N-M`, decimal digits only.
fn range(entry: &str) -> Result<(u32, u32), CpuListError> {
    let not_a_number = || CpuListError::NotANumber {
        entry: entry.to_owned(),
    };
    let number = |digits: &str| -> Result<u32, CpuListError> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(not_a_number());
        }
        digits.parse().map_err(|_| not_a_number())
    };
    let (first, last) = match entry.split_once('-') {
        Some((first, last)) => (number(first)?, number(last)?),
        None => {
            let only = number(entry)?;
            (only, only)
        }
    };
    if last < first {
        return Err(CpuListError::Backwards {
            entry: entry.to_owned(),
        });
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_kernel_writes_are_counted() {
        let cases: [(&str, u32); 8] = [
            ("0\n", 1),
            ("0-1\n", 2),
            ("0-3,6,8-11\n", 9),
            ("1-3", 3),
            ("0,2,4,6", 4),
            ("0-4095", 4096),
            ("5", 1),
            ("0-1,2-3", 4),
        ];
        for (text, expected) in cases {
            assert_eq!(count(text), Ok(expected), "{text:?}");
        }
    }

    #[test]
    fn anything_else_is_refused_naming_the_entry() {
        let not_a_number = |e: &str| CpuListError::NotANumber { entry: e.into() };
        let backwards = |e: &str| CpuListError::Backwards { entry: e.into() };
        let out_of_order = |e: &str| CpuListError::OutOfOrder { entry: e.into() };
        let too_many = |e: &str| CpuListError::TooMany { entry: e.into() };
        let cases: Vec<(&str, CpuListError)> = vec![
            ("", CpuListError::Empty),
            ("\n", CpuListError::Empty),
            ("  \n", CpuListError::Empty),
            ("0-3,", not_a_number("")),
            (",0", not_a_number("")),
            ("0,,1", not_a_number("")),
            ("a", not_a_number("a")),
            ("0-", not_a_number("0-")),
            ("-3", not_a_number("-3")),
            ("0-1-2", not_a_number("0-1-2")),
            ("+1", not_a_number("+1")),
            (" 0", not_a_number(" 0")),
            ("0 - 3", not_a_number("0 - 3")),
            ("0-3\n\n4", not_a_number("0-3\n\n4")),
            ("0-3\n4", not_a_number("0-3\n4")),
            ("4294967296", not_a_number("4294967296")),
            ("3-1", backwards("3-1")),
            ("0-3,2", out_of_order("2")),
            ("4,1", out_of_order("1")),
            ("1,1", out_of_order("1")),
            ("4294967295,0", out_of_order("0")),
            ("4294967295,4294967295", out_of_order("4294967295")),
            ("0-4294967295", too_many("0-4294967295")),
        ];
        for (text, expected) in cases {
            assert_eq!(count(text), Err(expected), "{text:?}");
        }
    }

    #[test]
    fn a_list_longer_than_a_page_is_refused() {
        let long = "0,".repeat(MAX_LEN / 2) + "0";
        assert_eq!(count(&long), Err(CpuListError::TooLong));
    }

    #[test]
    fn the_highest_cpu_number_counts_once() {
        assert_eq!(count("4294967295"), Ok(1));
        assert_eq!(count("4294967294-4294967295"), Ok(2));
    }
}
