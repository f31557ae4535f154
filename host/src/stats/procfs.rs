//! Parsers of the kernel files the node's stats come from (`/proc/stat`, `/proc/meminfo`,
//! `/proc/vmstat`, `/proc/net/dev`, `/proc/net/route`, `/proc/loadavg`): pure functions on
//! the files' text, so they are tested on fixtures, and [`read`], which applies one to a file.

use std::path::Path;

use super::error::{HostStatsError, ParseError};

/// Reads `path` (blocking) and parses it with `parse`.
///
/// # Errors
/// [`HostStatsError::Read`] when the file cannot be read, [`HostStatsError::Parse`] with the parser's
/// reason when it is malformed.
pub fn read<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, ParseError>,
) -> Result<T, HostStatsError> {
    let text = std::fs::read_to_string(path).map_err(|source| HostStatsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|source| HostStatsError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Nanoseconds per `USER_HZ` tick: the kernel reports `/proc/stat` times in `USER_HZ`, which is
/// 100 on every Linux architecture regardless of the kernel's own tick rate.
const NANOS_PER_TICK: u64 = 10_000_000;

/// Bytes per unit of `/proc/meminfo` (it says `kB`, meaning KiB).
const MEMINFO_UNIT: u64 = 1024;

/// What `/proc/stat` tells about the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// CPU time spent on anything but idling and waiting for I/O, over all CPUs.
    pub busy_core_nanos: u64,
    /// When the node booted, in seconds since the Unix epoch.
    pub boot_time: i64,
}

/// Parses `/proc/stat`.
///
/// # Errors
/// [`ParseError`] naming the missing or malformed line.
pub fn stat(text: &str) -> Result<ProcStat, ParseError> {
    let cpu = text
        .lines()
        .find_map(|line| line.strip_prefix("cpu "))
        .ok_or_else(|| ParseError::missing("aggregate \"cpu\" line"))?;
    let ticks: Vec<u64> = cpu
        .split_whitespace()
        .map(str::parse::<u64>)
        .collect::<Result<_, _>>()
        .map_err(ParseError::bad_number("cpu line"))?;
    if ticks.len() < 4 {
        return Err(ParseError::CpuFields { found: ticks.len() });
    }
    // user nice system idle iowait irq softirq steal (guest times are part of user and nice).
    let busy: u64 = ticks
        .iter()
        .take(8)
        .enumerate()
        .filter(|(index, _)| *index != 3 && *index != 4)
        .map(|(_, value)| value)
        .sum();
    let boot_time = text
        .lines()
        .find_map(|line| line.strip_prefix("btime "))
        .ok_or_else(|| ParseError::missing("\"btime\" line"))?
        .trim()
        .parse()
        .map_err(ParseError::bad_number("btime"))?;
    Ok(ProcStat {
        busy_core_nanos: busy.saturating_mul(NANOS_PER_TICK),
        boot_time,
    })
}

/// The `/proc/meminfo` values the memory stats need, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meminfo {
    /// `MemTotal`.
    pub total: u64,
    /// `MemFree`.
    pub free: u64,
    /// `Inactive(file)`: page cache the kernel reclaims first.
    pub inactive_file: u64,
    /// `AnonPages`: anonymous memory.
    pub anon: u64,
}

/// Parses `/proc/meminfo`.
///
/// # Errors
/// [`ParseError`] naming the first missing or malformed field.
pub fn meminfo(text: &str) -> Result<Meminfo, ParseError> {
    let field = |name: &str| -> Result<u64, ParseError> {
        let value = text
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .ok_or_else(|| ParseError::missing(format!("{name:?} field")))?;
        let number = value.split_whitespace().next().unwrap_or_default();
        number
            .parse::<u64>()
            .map(|kib| kib.saturating_mul(MEMINFO_UNIT))
            .map_err(ParseError::bad_number(name))
    };
    Ok(Meminfo {
        total: field("MemTotal")?,
        free: field("MemFree")?,
        inactive_file: field("Inactive(file)")?,
        anon: field("AnonPages")?,
    })
}

/// The page fault counters of `/proc/vmstat`: `(pgfault, pgmajfault)`.
///
/// # Errors
/// [`ParseError`] naming the missing or malformed counter.
pub fn vmstat_faults(text: &str) -> Result<(u64, u64), ParseError> {
    let counter = |name: &str| -> Result<u64, ParseError> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .ok_or_else(|| ParseError::missing(format!("{name:?} counter")))?
            .trim()
            .parse()
            .map_err(ParseError::bad_number(name))
    };
    Ok((counter("pgfault")?, counter("pgmajfault")?))
}

/// One interface's line of `/proc/net/dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Its name.
    pub name: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Receive errors.
    pub rx_errors: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Send errors.
    pub tx_errors: u64,
}

/// Parses `/proc/net/dev` (or `/proc/<pid>/net/dev`): every interface, in file order.
///
/// # Errors
/// [`ParseError`] naming the interface whose line is malformed.
pub fn net_dev(text: &str) -> Result<Vec<Interface>, ParseError> {
    // Two header lines, then `name: rx_bytes packets errs drop fifo frame compressed multicast
    // tx_bytes packets errs …`.
    text.lines()
        .skip(2)
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, counters) =
                line.split_once(':')
                    .ok_or_else(|| ParseError::NoInterfaceName {
                        line: line.to_owned(),
                    })?;
            let name = name.trim().to_string();
            let values: Vec<u64> = counters
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(ParseError::bad_number(format!("interface {name}")))?;
            if values.len() < 16 {
                return Err(ParseError::InterfaceCounters {
                    interface: name,
                    found: values.len(),
                });
            }
            Ok(Interface {
                name,
                rx_bytes: values[0],
                rx_errors: values[2],
                tx_bytes: values[8],
                tx_errors: values[10],
            })
        })
        .collect()
}

/// The interface of the IPv4 default route in `/proc/net/route`, if there is one.
#[must_use]
pub fn default_route_interface(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let mut fields = line.split_whitespace();
        let interface = fields.next()?;
        let destination = fields.next()?;
        (destination == "00000000").then(|| interface.to_string())
    })
}

/// How many processes (kernel scheduling entities) exist, from `/proc/loadavg`'s
/// `running/total` field.
///
/// # Errors
/// [`ParseError`] when the field is missing or malformed.
pub fn loadavg_processes(text: &str) -> Result<i64, ParseError> {
    text.split_whitespace()
        .nth(3)
        .and_then(|field| field.split_once('/'))
        .ok_or_else(|| ParseError::missing("running/total field"))?
        .1
        .parse()
        .map_err(ParseError::bad_number("process count"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 20 30 4000 50 6 7 8 9 10\n\
                        cpu0 50 10 15 2000 25 3 3 4 4 5\n\
                        intr 12345\nctxt 999\nbtime 1714557600\nprocesses 4242\n";

    #[test]
    fn stat_counts_busy_ticks_without_idle_iowait_or_guest() {
        let parsed = stat(STAT).unwrap();
        // user+nice+system+irq+softirq+steal = 100+20+30+6+7+8 = 171 ticks of 10 ms.
        assert_eq!(parsed.busy_core_nanos, 171 * 10_000_000);
        assert_eq!(parsed.boot_time, 1_714_557_600);
    }

    #[test]
    fn stat_without_a_cpu_or_btime_line_is_an_error() {
        assert_eq!(
            stat("btime 1\n").unwrap_err().to_string(),
            "no aggregate \"cpu\" line"
        );
        assert_eq!(
            stat("cpu  1 2 3 4\n").unwrap_err(),
            ParseError::missing("\"btime\" line")
        );
        assert!(matches!(
            stat("cpu  1 x 3 4\nbtime 1\n"),
            Err(ParseError::BadNumber { field, .. }) if field == "cpu line"
        ));
        assert_eq!(
            stat("cpu  1 2\nbtime 1\n"),
            Err(ParseError::CpuFields { found: 2 })
        );
    }

    const MEMINFO: &str = "MemTotal:        8000000 kB\nMemFree:         1000000 kB\n\
                           MemAvailable:    5000000 kB\nInactive(anon):    10000 kB\n\
                           Inactive(file):  2000000 kB\nAnonPages:       1500000 kB\n";

    #[test]
    fn meminfo_reads_kib_as_bytes() {
        let parsed = meminfo(MEMINFO).unwrap();
        assert_eq!(parsed.total, 8_000_000 * 1024);
        assert_eq!(parsed.free, 1_000_000 * 1024);
        assert_eq!(parsed.inactive_file, 2_000_000 * 1024);
        assert_eq!(parsed.anon, 1_500_000 * 1024);
        assert_eq!(
            meminfo("MemTotal: 1 kB\n").unwrap_err().to_string(),
            "no \"MemFree\" field"
        );
    }

    #[test]
    fn vmstat_finds_the_exact_fault_counters() {
        let text = "pgfault_extra 1\npgfault 123\npgmajfault 4\n";
        assert_eq!(vmstat_faults(text).unwrap(), (123, 4));
        assert!(vmstat_faults("pgfault 1\n").is_err());
    }

    const NET_DEV: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 5000000    4000    3    0    0     0          0         0   700000    3000    2    0    0     0       0          0
";

    #[test]
    fn net_dev_reads_bytes_and_errors_per_interface() {
        let interfaces = net_dev(NET_DEV).unwrap();
        assert_eq!(interfaces.len(), 2);
        assert_eq!(
            interfaces[1],
            Interface {
                name: "eth0".to_string(),
                rx_bytes: 5_000_000,
                rx_errors: 3,
                tx_bytes: 700_000,
                tx_errors: 2,
            }
        );
        assert_eq!(
            net_dev("h\nh\neth0: 1 2 3\n").unwrap_err().to_string(),
            "interface eth0: 3 counters, want 16"
        );
    }

    #[test]
    fn the_default_route_names_its_interface() {
        let route = "Iface\tDestination\tGateway\tFlags\n\
                     cni0\t0058A8C0\t00000000\t0001\n\
                     ens4\t00000000\t0100A8C0\t0003\n";
        assert_eq!(default_route_interface(route).as_deref(), Some("ens4"));
        assert_eq!(default_route_interface("Iface\tDestination\n"), None);
    }

    #[test]
    fn loadavg_gives_the_process_count() {
        assert_eq!(
            loadavg_processes("0.10 0.20 0.30 2/523 9999\n").unwrap(),
            523
        );
        assert!(loadavg_processes("0.10 0.20\n").is_err());
    }
}
